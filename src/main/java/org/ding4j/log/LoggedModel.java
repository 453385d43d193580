package org.ding4j.log;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * DI-engine's {@code LoggedModel}: declared variables keep (time, value) records stamped by a {@link BaseTime};
 * records older than {@code expire} are dropped except the last one before the window. {@code val} is the latest
 * value, {@code avg} the plain mean of the values in the window, in O(1) from a running sum (a scan only while a
 * NaN or infinity is in the window, so that one never poisons the sum; the sum is recomputed from the window once
 * per ring's worth of expired records, so rounding cannot accumulate). Custom statistics can be registered per
 * variable. {@link #freeze()} pins the time (records then share one stamp) until {@link #unfreeze()}.
 * <p>
 * Storage per variable is a ring that grows to the window's size once; recording allocates nothing after that.
 * Single-threaded.
 */
public class LoggedModel
{
    private final BaseTime clock;
    private final double expire;
    private final Map<String, Records> variables = new LinkedHashMap<>();
    private final Map<String, Map<String, WindowFunction>> attributes = new HashMap<>();
    private boolean frozen;
    private double frozenTime;

    /**
     * @param clock  what stamps records
     * @param expire the window length in the clock's unit, > 0
     * @throws IllegalArgumentException if expire is not positive (or NaN)
     */
    public LoggedModel(final BaseTime clock, final double expire)
    {
        this.clock = Objects.requireNonNull(clock, "clock");
        if (!(expire > 0))
        {
            throw new IllegalArgumentException("expire: expected a positive window, got " + expire);
        }
        this.expire = expire;
    }

    /**
     * Declares a variable.
     *
     * @param name  its name
     * @param type  the type its values must have ({@code Double}, {@code Float}, {@code Long} or {@code Integer})
     * @throws IllegalArgumentException if declared twice or the type is not numeric
     */
    public final void declare(final String name, final Class<? extends Number> type)
    {
        Objects.requireNonNull(type, "type");
        if (variables.containsKey(name))
        {
            throw new IllegalArgumentException("monitor variable " + name + " is declared twice");
        }
        variables.put(name, new Records(name, type));
    }

    /** @return the window length */
    public final double expire()
    {
        return expire;
    }

    /** @return the current time (the frozen one while frozen) */
    public final double currentTime()
    {
        return frozen ? frozenTime : clock.time();
    }

    /** Pins the current time until {@link #unfreeze()}. */
    public final void freeze()
    {
        frozenTime = clock.time();
        frozen = true;
    }

    /** Lets time run again. */
    public final void unfreeze()
    {
        frozen = false;
    }

    /** @return the declared variable names, in order */
    public final List<String> variables()
    {
        return Collections.unmodifiableList(new ArrayList<>(variables.keySet()));
    }

    /**
     * @param name a name
     * @return whether it is declared
     */
    public final boolean isDeclared(final String name)
    {
        return variables.containsKey(name);
    }

    /**
     * Records a value of any type, checked against the declared type.
     *
     * @param name  a declared variable
     * @param value its value
     * @throws IllegalArgumentException if undeclared, of the wrong type, or if time went backwards for it
     */
    public final void record(final String name, final Object value)
    {
        final Records records = records(name);
        if (!records.type.isInstance(value))
        {
            throw new IllegalArgumentException("monitor variable " + name + ": expected a "
                + records.type.getSimpleName() + ", got " + (null == value ? "null" : value.getClass().getSimpleName()
                + " " + value));
        }
        records.record(((Number)value).doubleValue());
    }

    /**
     * Records a number now (the allocation-free path).
     *
     * @param name  a declared variable
     * @param value its value (NaN and infinities are kept as they are)
     * @throws IllegalArgumentException if undeclared or if time went backwards for it
     */
    public final void record(final String name, final double value)
    {
        records(name).record(value);
    }

    /**
     * A declared variable as a handle to record into without looking its name up each time (the log hook keeps
     * one per log-buffer slot).
     *
     * @param name a declared variable
     * @return its handle, valid as long as this model
     * @throws IllegalArgumentException if undeclared
     */
    public final Variable variable(final String name)
    {
        return records(name);
    }

    /**
     * @param name a declared variable
     * @return whether it has a record
     */
    public final boolean hasRecord(final String name)
    {
        return records(name).size > 0;
    }

    /**
     * @param name a declared variable with a record
     * @return its latest value
     * @throws IllegalArgumentException if undeclared or never recorded
     */
    public final double val(final String name)
    {
        return nonEmpty(name).latest();
    }

    /**
     * @param name a declared variable with a record
     * @return the mean of its values in the window (including the last record before the window)
     * @throws IllegalArgumentException if undeclared or never recorded
     */
    public final double avg(final String name)
    {
        final Records records = nonEmpty(name);
        records.prune(currentTime() - expire);
        return records.mean();
    }

    /**
     * Registers a custom statistic, read with {@link #value(String, String)}.
     *
     * @param attribute the statistic's name (e.g. "max")
     * @param name      a declared variable
     * @param function  computes it from the window
     */
    public final void registerAttributeValue(final String attribute, final String name, final WindowFunction function)
    {
        records(name);
        attributes.computeIfAbsent(attribute, k -> new HashMap<>()).put(name, Objects.requireNonNull(function));
    }

    /**
     * @param attribute "val", "avg" or a registered statistic
     * @param name      a declared variable with a record
     * @return the statistic
     * @throws IllegalArgumentException if the statistic is unknown for that variable, or it has no record
     */
    public final double value(final String attribute, final String name)
    {
        if ("val".equals(attribute))
        {
            return val(name);
        }
        if ("avg".equals(attribute))
        {
            return avg(name);
        }
        final Map<String, WindowFunction> byName = attributes.get(attribute);
        final WindowFunction function = null == byName ? null : byName.get(name);
        if (null == function)
        {
            throw new IllegalArgumentException("monitor variable " + name + " has no attribute " + attribute);
        }
        final Records records = nonEmpty(name);
        records.prune(currentTime() - expire);
        return function.apply(records);
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

    /** The records of one variable in the window, oldest first. */
    public interface Window
    {
        /** @return how many records */
        int count();

        /**
         * @param i 0 = oldest
         * @return that record's value
         */
        double value(int i);

        /**
         * @param i 0 = oldest
         * @return that record's time
         */
        double time(int i);
    }

    /** One declared variable, recorded into by handle (see {@link #variable}). */
    public interface Variable
    {
        /**
         * Records a number now, as {@link LoggedModel#record(String, double)}.
         *
         * @param value its value (NaN and infinities are kept as they are)
         * @throws IllegalArgumentException if time went backwards for it
         */
        void record(double value);
    }

    /**
     * A ring of (time, value) records in time order with a running sum of its finite values. The capacity is a power
     * of two (indices wrap with a mask, not a division), and the sum is recomputed from the window each time as many
     * records have left it as the ring holds, so that rounding from adding and subtracting cannot build up (a huge
     * value leaving the window would otherwise leave its rounding error in the mean of small ones): O(1) amortised.
     */
    private final class Records implements Window, Variable
    {
        private final String name;
        private final Class<? extends Number> type;
        private double[] times = new double[4];
        private double[] values = new double[4];
        private int head;
        private int size;
        private int prunedSinceSum;
        private double finiteSum;
        private int nonFinite;

        Records(final String name, final Class<? extends Number> type)
        {
            this.name = name;
            if (!(Double.class == type || Float.class == type || Long.class == type || Integer.class == type))
            {
                throw new IllegalArgumentException("monitor variables hold numbers, got " + type.getName());
            }
            this.type = type;
        }

        @Override
        public void record(final double value)
        {
            final double now = currentTime();
            if (size > 0 && now < lastTime())
            {
                throw new IllegalArgumentException("monitor variable " + name + ": time went backwards from "
                    + lastTime() + " to " + now);
            }
            prune(now - expire);
            if (size == times.length)
            {
                grow();
            }
            final int slot = (head + size) & (times.length - 1);
            times[slot] = now;
            values[slot] = value;
            size++;
            account(value, 1);
        }

        /** Drops records before the window but the last one of them. */
        void prune(final double windowStart)
        {
            final int mask = times.length - 1;
            while (size >= 2 && times[(head + 1) & mask] < windowStart)
            {
                account(values[head], -1);
                head = (head + 1) & mask;
                size--;
                if (++prunedSinceSum == times.length)
                {
                    resum();
                }
            }
        }

        private void resum()
        {
            prunedSinceSum = 0;
            finiteSum = 0.0;
            nonFinite = 0;
            for (int i = 0; i < size; i++)
            {
                account(value(i), 1);
            }
        }

        private void account(final double value, final int sign)
        {
            if (Double.isFinite(value))
            {
                finiteSum += sign * value;
            }
            else
            {
                nonFinite += sign;
            }
        }

        double lastTime()
        {
            return times[(head + size - 1) & (times.length - 1)];
        }

        double latest()
        {
            return values[(head + size - 1) & (times.length - 1)];
        }

        double mean()
        {
            if (0 == nonFinite)
            {
                return finiteSum / size;
            }
            // A NaN or infinity is in the window: its mean is what plain summation gives.
            double sum = 0.0;
            for (int i = 0; i < size; i++)
            {
                sum += value(i);
            }
            return sum / size;
        }

        @Override
        public int count()
        {
            return size;
        }

        @Override
        public double value(final int i)
        {
            return values[(head + i) & (times.length - 1)];
        }

        @Override
        public double time(final int i)
        {
            return times[(head + i) & (times.length - 1)];
        }

        private void grow()
        {
            final double[] newTimes = new double[times.length * 2];
            final double[] newValues = new double[times.length * 2];
            for (int i = 0; i < size; i++)
            {
                newTimes[i] = time(i);
                newValues[i] = value(i);
            }
            times = newTimes;
            values = newValues;
            head = 0;
        }
    }
}
