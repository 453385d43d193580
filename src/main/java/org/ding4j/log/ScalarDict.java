package org.ding4j.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.ObjDoubleConsumer;

/**
 * Named double values written by index: a key is registered once (at setup, or on its first map-style write) and
 * gets an index; after that {@link #put(int, double)} stores a primitive with no allocation and no hashing.
 * {@link #clear()} forgets the values but keeps the keys and their indices.
 * <p>
 * Threads: {@link #register} is setup-time and single-threaded. After that, any number of threads may
 * {@link #put(int, double)} (e.g. a collector thread writing its own keys) while the training thread reads and
 * clears: values and presence flags are written with release and read with acquire ordering (plain stores and
 * loads on x86), so a reader sees a whole value, never a torn one, and no lock is taken.
 */
public final class ScalarDict
{
    private final Map<String, Integer> indexOf = new HashMap<>();
    private String[] names = new String[16];
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    // Each key owns 8 longs (a 64-byte cache line): its value bits and its presence flag. Without the stride,
    // two threads writing neighbouring keys made each other 10x slower (false sharing; LogBufferBenchmark).
    private static final int STRIDE = 8;

    private long[] slots = new long[16 * STRIDE];
    private int size;

    /**
     * Registers a key (idempotent).
     *
     * @param key the name
     * @return its index
     */
    public int register(final String key)
    {
        Objects.requireNonNull(key, "key");
        final Integer existing = indexOf.get(key);
        if (null != existing)
        {
            return existing;
        }
        if (size == names.length)
        {
            names = Arrays.copyOf(names, size * 2);
            slots = Arrays.copyOf(slots, size * 2 * STRIDE);
        }
        names[size] = key;
        indexOf.put(key, size);
        return size++;
    }

    /**
     * Stores a value by index.
     *
     * @param index from {@link #register}
     * @param value the value (NaN and infinities are stored as they are)
     */
    public void put(final int index, final double value)
    {
        final long[] slots = this.slots;
        LONGS.setRelease(slots, index * STRIDE, Double.doubleToRawLongBits(value));
        LONGS.setRelease(slots, index * STRIDE + 1, 1L);
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

    /** Forgets every value; keys keep their indices. */
    public void clear()
    {
        for (int i = 0; i < size; i++)
        {
            LONGS.setRelease(slots, i * STRIDE + 1, 0L);
        }
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
        return 0L != (long)LONGS.getAcquire(slots, index * STRIDE + 1);
    }

    /**
     * @param index a registered index holding a value
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
