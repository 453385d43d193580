package org.ding4j.log;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Latency percentiles (1% resolution, up to one minute) of {@code train_time} (the policy update) and {@code data_time} (the wait for a batch): the
 * training thread records nanoseconds into HdrHistogram single-writer recorders without allocating or locking;
 * {@code log_show} takes an interval histogram per report on the training thread (recycled, so no allocation after
 * warm-up) and the log reporter adds it to a running total. Percentiles per interval go into the log table.
 * <p>
 * Threads: record and take intervals on the training thread; {@link #addToTotals} on the reporter;
 * {@link #total} from any thread (it copies under the lock the reporter takes).
 */
public final class LearnerLatency
{
    /** Longest latency tracked: one minute (longer values are recorded as one minute). */
    public static final long HIGHEST_NS = TimeUnit.MINUTES.toNanos(1);
    /**
     * Two significant digits (1% resolution): the counts array is then ~30 KB, which the training thread resets
     * once per report when it takes an interval; three digits would make that ~10x larger.
     */
    public static final int SIGNIFICANT_DIGITS = 2;

    private final SingleWriterRecorder train = new SingleWriterRecorder(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private final SingleWriterRecorder data = new SingleWriterRecorder(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private final Histogram trainTotal = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private final Histogram dataTotal = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);

    /** @param ns one update's wall time */
    public void recordTrainNs(final long ns)
    {
        train.recordValue(Math.min(Math.max(0, ns), HIGHEST_NS));
    }

    /** @param ns one wait for a batch */
    public void recordDataNs(final long ns)
    {
        data.recordValue(Math.min(Math.max(0, ns), HIGHEST_NS));
    }

    /**
     * The train_time samples since the last call, in a recycled histogram. Called on the training thread at report
     * time, so the interval is exactly the report's.
     *
     * @param recycle a histogram this method returned before (or null, which allocates)
     * @return the interval histogram (ns)
     */
    public Histogram trainInterval(final Histogram recycle)
    {
        return train.getIntervalHistogram(recycle);
    }

    /**
     * The data_time samples since the last call, as {@link #trainInterval}.
     *
     * @param recycle a histogram this method returned before (or null, which allocates)
     * @return the interval histogram (ns)
     */
    public Histogram dataInterval(final Histogram recycle)
    {
        return data.getIntervalHistogram(recycle);
    }

    /**
     * Adds one report's intervals to the totals (the reporter thread does this).
     *
     * @param trainInterval train_time interval
     * @param dataInterval  data_time interval
     */
    public synchronized void addToTotals(final Histogram trainInterval, final Histogram dataInterval)
    {
        trainTotal.add(trainInterval);
        dataTotal.add(dataInterval);
    }

    /**
     * @param var {@code train_time} or {@code data_time}
     * @return a copy of everything reported so far for it (ns)
     * @throws IllegalArgumentException for another name
     */
    public synchronized Histogram total(final String var)
    {
        return switch (var)
        {
            case "train_time" -> trainTotal.copy();
            case "data_time" -> dataTotal.copy();
            default -> throw new IllegalArgumentException("latency: expected train_time or data_time, got " + var);
        };
    }
}
