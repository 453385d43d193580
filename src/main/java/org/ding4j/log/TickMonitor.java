package org.ding4j.log;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * DI-engine's {@code TickMonitor}: declared variables keep (tick, value) records; time is a tick counter stepped
 * once per {@code log_show} call. Records older than {@code expire} ticks are dropped, except the last one before the
 * window, as DI-engine's {@code LoggedModel} keeps it. {@link #val} is the latest value and {@link #avg} the plain
 * mean of the records in the window.
 * <p>
 * Storage per variable is a small ring that grows to the window's size once; recording allocates nothing after
 * that. Single-threaded: the training thread records, steps and reads it.
 */
public final class TickMonitor
{
    /** The learner's base variables, as DI-engine's {@code TickMonitor} declares them. */
    public static final List<String> BASE_VARIABLES = List.of(
        "data_time", "train_time", "total_collect_step", "total_step", "total_sample", "total_episode",
        "total_duration");

    private final long expire;
    private final Map<String, Records> variables = new LinkedHashMap<>();
    private long time;

    /**
     * Builds the monitor for a policy, as DI-engine's {@code get_simple_monitor_type}: the base variables, plus
     * {@code sample_count} and the policy's own when it declares any.
     *
     * @param policyVariables the policy's {@code monitorVars()}
     * @param expire          window length in ticks, positive
     * @throws IllegalArgumentException if expire is not positive or a name repeats
     */
    public TickMonitor(final List<String> policyVariables, final long expire)
    {
        Objects.requireNonNull(policyVariables, "policyVariables");
        if (expire <= 0)
        {
            throw new IllegalArgumentException("expire: expected a positive tick count, got " + expire);
        }
        this.expire = expire;
        final List<String> names = new ArrayList<>(BASE_VARIABLES);
        if (!policyVariables.isEmpty())
        {
            names.add(2, "sample_count");
            names.addAll(policyVariables);
        }
        for (final String name : names)
        {
            if (null != variables.put(name, new Records()))
            {
                throw new IllegalArgumentException("monitor variable " + name + " is declared twice");
            }
        }
    }

    /** @return the current tick */
    public long time()
    {
        return time;
    }

    /** Advances the tick by one. */
    public void step()
    {
        time++;
    }

    /** @return the window length in ticks */
    public long expire()
    {
        return expire;
    }

    /** @return the declared variable names, in order */
    public List<String> variables()
    {
        return Collections.unmodifiableList(new ArrayList<>(variables.keySet()));
    }

    /**
     * @param name a variable name
     * @return whether it is declared
     */
    public boolean isDeclared(final String name)
    {
        return variables.containsKey(name);
    }

    /**
     * Records a value at the current tick.
     *
     * @param name  a declared variable
     * @param value the value (NaN and infinities are kept as they are)
     * @throws IllegalArgumentException if the variable is not declared
     */
    public void record(final String name, final double value)
    {
        records(name).add(time, value, time - expire);
    }

    /**
     * @param name a declared variable
     * @return whether it has a record
     */
    public boolean hasRecord(final String name)
    {
        return records(name).size > 0;
    }

    /**
     * @param name a declared variable with a record
     * @return its latest value
     * @throws IllegalArgumentException if not declared or never recorded
     */
    public double val(final String name)
    {
        return nonEmpty(name).latest();
    }

    /**
     * @param name a declared variable with a record
     * @return the mean of its values in the window (including the last record before the window)
     * @throws IllegalArgumentException if not declared or never recorded
     */
    public double avg(final String name)
    {
        final Records records = nonEmpty(name);
        records.prune(time - expire);
        return records.mean();
    }

    private Records records(final String name)
    {
        final Records records = variables.get(name);
        if (null == records)
        {
            throw new IllegalArgumentException("monitor variable " + name + " is not declared (declared: "
                + variables.keySet() + ")");
        }
        return records;
    }

    private Records nonEmpty(final String name)
    {
        final Records records = records(name);
        if (0 == records.size)
        {
            throw new IllegalArgumentException("monitor variable " + name + " has no record yet");
        }
        return records;
    }

    /** A ring of (tick, value) records in time order. */
    private static final class Records
    {
        private long[] ticks = new long[4];
        private double[] values = new double[4];
        private int head;
        private int size;

        void add(final long tick, final double value, final long windowStart)
        {
            prune(windowStart);
            if (size == ticks.length)
            {
                grow();
            }
            final int slot = (head + size) % ticks.length;
            ticks[slot] = tick;
            values[slot] = value;
            size++;
        }

        /** Drops records before the window but the last one of them. */
        void prune(final long windowStart)
        {
            while (size >= 2 && ticks[(head + 1) % ticks.length] < windowStart)
            {
                head = (head + 1) % ticks.length;
                size--;
            }
        }

        double latest()
        {
            return values[(head + size - 1) % ticks.length];
        }

        double mean()
        {
            double sum = 0.0;
            for (int i = 0; i < size; i++)
            {
                sum += values[(head + i) % ticks.length];
            }
            return sum / size;
        }

        private void grow()
        {
            final long[] newTicks = new long[ticks.length * 2];
            final double[] newValues = new double[ticks.length * 2];
            for (int i = 0; i < size; i++)
            {
                newTicks[i] = ticks[(head + i) % ticks.length];
                newValues[i] = values[(head + i) % ticks.length];
            }
            ticks = newTicks;
            values = newValues;
            head = 0;
        }
    }
}
