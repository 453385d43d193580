package org.ding4j.log;

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
 * Single-writer: the training thread writes, clears and reads it (the log hooks run on that thread).
 */
public final class ScalarDict
{
    private final Map<String, Integer> indexOf = new HashMap<>();
    private String[] names = new String[16];
    private double[] values = new double[16];
    private boolean[] present = new boolean[16];
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
            values = Arrays.copyOf(values, size * 2);
            present = Arrays.copyOf(present, size * 2);
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
        values[index] = value;
        present[index] = true;
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
        return null != index && present[index];
    }

    /**
     * @param key a name that holds a value
     * @return the value
     * @throws IllegalArgumentException if it holds none
     */
    public double get(final String key)
    {
        final Integer index = indexOf.get(key);
        if (null == index || !present[index])
        {
            throw new IllegalArgumentException("log buffer has no value for key=" + key);
        }
        return values[index];
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
            if (present[i])
            {
                consumer.accept(names[i], values[i]);
            }
        }
    }

    /** @return how many keys hold a value now */
    public int count()
    {
        int count = 0;
        for (int i = 0; i < size; i++)
        {
            count += present[i] ? 1 : 0;
        }
        return count;
    }

    /** Forgets every value; keys keep their indices. */
    public void clear()
    {
        Arrays.fill(present, 0, size, false);
    }

    /** @return the values present, as a new map (for reports and tests) */
    public Map<String, Double> toMap()
    {
        final Map<String, Double> map = new java.util.LinkedHashMap<>();
        forEach(map::put);
        return map;
    }
}
