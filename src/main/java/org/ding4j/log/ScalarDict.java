package org.ding4j.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ObjDoubleConsumer;

/**
 * Named double values written by index: a key is registered once (at setup, or on its first map-style write) and
 * gets an index; after that {@link #put(int, double)} stores a primitive with no allocation and no hashing.
 * {@link #clear()} forgets the values but keeps the keys and their indices.
 * <p>
 * Threads: each key has one writer at a time, but different keys may have different writers (e.g. a collector
 * thread writing its own keys) while the training thread reads and clears (the one clearer), and any thread may
 * register keys meanwhile. Registration is serialised and never moves the slots (they are sized once, for
 * {@link #capacity()} keys), so a put racing a register lands where readers look. A value is present when its stamp equals the current generation,
 * which {@link #clear()} advances: a put that read the generation before a racing clear stamps the old one and stays
 * cleared, so a clear never lets the previous update's value back in. Values and stamps are written with release and
 * read with acquire ordering (plain stores and loads on x86): a reader sees a whole value, never a torn one, and no
 * lock is taken on put, read or clear. {@code ConcurrencyStressTest} checks these claims.
 */
public final class ScalarDict
{
    /** Keys a dict holds at most unless built with another capacity: 64 KiB of slots. */
    public static final int DEFAULT_CAPACITY = 1024;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle GENERATION;
    // Each key owns 8 longs (a 64-byte cache line): its value bits and its stamp. Without the stride, two threads
    // writing neighbouring keys made each other 10x slower (false sharing; LogBufferBenchmark).
    private static final int STRIDE = 8;

    static
    {
        try
        {
            GENERATION = MethodHandles.lookup().findVarHandle(ScalarDict.class, "generation", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Map<String, Integer> indexOf = new ConcurrentHashMap<>();
    private final String[] names;
    private final long[] slots;
    /** Keys registered; written under the lock, read without it (names[i] is published before size moves). */
    private volatile int size;
    /** Starts at 1: a slot's stamp 0 is never present. Accessed through GENERATION. */
    @SuppressWarnings("unused")
    private long generation = 1;

    /** A dict of {@link #DEFAULT_CAPACITY} keys. */
    public ScalarDict()
    {
        this(DEFAULT_CAPACITY);
    }

    /**
     * @param capacity the most keys it will hold, at least 1
     * @throws IllegalArgumentException if capacity is below 1
     */
    public ScalarDict(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("capacity: expected at least 1 key, got " + capacity);
        }
        names = new String[capacity];
        slots = new long[capacity * STRIDE];
    }

    /**
     * Registers a key (idempotent), from any thread.
     *
     * @param key the name
     * @return its index
     * @throws IllegalStateException if the dict already holds {@link #capacity()} keys
     */
    public int register(final String key)
    {
        Objects.requireNonNull(key, "key");
        final Integer existing = indexOf.get(key);
        if (null != existing)
        {
            return existing;
        }
        synchronized (indexOf)
        {
            final Integer raced = indexOf.get(key);
            if (null != raced)
            {
                return raced;
            }
            final int index = size;
            if (index == names.length)
            {
                throw new IllegalStateException("log buffer: cannot register key=" + key + ": it holds its capacity of "
                    + names.length + " keys");
            }
            names[index] = key;
            size = index + 1;
            indexOf.put(key, index);
            return index;
        }
    }

    /**
     * Stores a value by index.
     *
     * @param index from {@link #register}
     * @param value the value (NaN and infinities are stored as they are)
     */
    public void put(final int index, final double value)
    {
        final long stamp = (long)GENERATION.getAcquire(this);
        LONGS.setRelease(slots, index * STRIDE, Double.doubleToRawLongBits(value));
        LONGS.setRelease(slots, index * STRIDE + 1, stamp);
    }

    /**
     * Stores a value by name, registering the name on first use.
     *
     * @param key   the name
     * @param value the value
     */
    public void put(final String key, final double value)
    {
        put(register(key), value);
    }

    /**
     * @param key a name
     * @return whether it holds a value now
     */
    public boolean has(final String key)
    {
        final Integer index = indexOf.get(key);
        return null != index && isPresent(index);
    }

    /**
     * @param key a name that holds a value
     * @return the value
     * @throws IllegalArgumentException if it holds none
     */
    public double get(final String key)
    {
        final Integer index = indexOf.get(key);
        if (null == index || !isPresent(index))
        {
            throw new IllegalArgumentException("log buffer has no value for key=" + key);
        }
        return value(index);
    }

    /**
     * Visits the values present, in registration order, without allocating.
     *
     * @param consumer receives (name, value)
     */
    public void forEach(final ObjDoubleConsumer<String> consumer)
    {
        for (int i = 0; i < size; i++)
        {
            if (isPresent(i))
            {
                consumer.accept(names[i], value(i));
            }
        }
    }

    /** @return how many keys hold a value now */
    public int count()
    {
        int count = 0;
        for (int i = 0; i < size; i++)
        {
            count += isPresent(i) ? 1 : 0;
        }
        return count;
    }

    /**
     * Forgets every value in one step (the generation moves on); keys keep their indices. From one thread at a time
     * (the training thread): a plain release store, not an atomic add, keeps it off the hot path's cost.
     */
    public void clear()
    {
        GENERATION.setRelease(this, (long)GENERATION.getAcquire(this) + 1L);
    }

    /** @return the most keys it holds */
    public int capacity()
    {
        return names.length;
    }

    /** @return keys registered so far (indices 0 to this - 1) */
    public int keyCount()
    {
        return size;
    }

    /**
     * @param index a registered index
     * @return its key
     */
    public String name(final int index)
    {
        return names[index];
    }

    /**
     * @param index a registered index
     * @return whether it holds a value now
     */
    public boolean isPresent(final int index)
    {
        return (long)GENERATION.getAcquire(this) == (long)LONGS.getAcquire(slots, index * STRIDE + 1);
    }

    /**
     * @param index a registered index
     * @return whether it was ever written: {@link #value(int)} then holds the last value put, also after a clear
     *         (what a monitor thread reads as the key's latest value)
     */
    public boolean wasWritten(final int index)
    {
        return 0L != (long)LONGS.getAcquire(slots, index * STRIDE + 1);
    }

    /**
     * @param index a registered index holding a value (or {@linkplain #wasWritten written} before a clear)
     * @return the value
     */
    public double value(final int index)
    {
        return Double.longBitsToDouble((long)LONGS.getAcquire(slots, index * STRIDE));
    }

    /** @return the values present, as a new map (for reports and tests) */
    public Map<String, Double> toMap()
    {
        final Map<String, Double> map = new java.util.LinkedHashMap<>();
        forEach(map::put);
        return map;
    }
}
