package org.ding4j.log;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Latency percentiles (1% resolution, up to one minute) of {@code train_time} (the policy update) and {@code data_time} (the wait for a batch): the
 * training thread records nanoseconds into HdrHistogram single-writer recorders without allocating or locking;
 * the log reporter takes an interval histogram per report (recycled, so no allocation after warm-up) and adds it to
 * a running total. Percentiles per interval go into the log table.
 * <p>
 * Threads: record on the training thread; {@link #takeInterval()} on the reporter; {@link #total} and
 * {@link #percentile} from any thread (a JMX client, a metrics registry): they drain the recorders into the totals
 * under the lock {@code takeInterval} holds, and what they drained still counts in the reporter's next interval.
 */
public final class LearnerLatency
{
    /** Longest latency tracked: one minute (longer values are recorded as one minute). */
    public static final long HIGHEST_NS = TimeUnit.MINUTES.toNanos(1);
    /** Two significant digits (1% resolution) keep each histogram's counts array near 30 KB. */
    public static final int SIGNIFICANT_DIGITS = 2;

    private final SingleWriterRecorder train = new SingleWriterRecorder(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private final SingleWriterRecorder data = new SingleWriterRecorder(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private Histogram trainInterval = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private Histogram dataInterval = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);
    /** Drained from the recorders, recycled; guarded by this. */
    private Histogram trainDrained;
    private Histogram dataDrained;
    /** Drained since the reporter's last interval; guarded by this. */
    private final Histogram trainPending = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);
    private final Histogram dataPending = new Histogram(HIGHEST_NS, SIGNIFICANT_DIGITS);
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
     * Swaps the recorders' intervals into the recycled interval histograms and adds them to the totals. Called by
     * the one reader (the log reporter) when it writes a report, so the interval is "since the previous report was
     * written": the training thread never pays for the swap (resetting the counts costs microseconds).
     */
    public synchronized void takeInterval()
    {
        drain();
        move(trainPending, trainInterval);
        move(dataPending, dataInterval);
    }

    private static void move(final Histogram from, final Histogram to)
    {
        to.reset();
        to.add(from);
        from.reset();
    }

    /** Under the lock: what the training thread recorded goes into the totals and the reporter's pending interval. */
    private void drain()
    {
        trainDrained = train.getIntervalHistogram(trainDrained);
        dataDrained = data.getIntervalHistogram(dataDrained);
        trainTotal.add(trainDrained);
        dataTotal.add(dataDrained);
        trainPending.add(trainDrained);
        dataPending.add(dataDrained);
    }

    /** @return the last interval's train_time histogram (ns); reader thread only, valid until the next take */
    public Histogram trainInterval()
    {
        return trainInterval;
    }

    /** @return the last interval's data_time histogram (ns); reader thread only, valid until the next take */
    public Histogram dataInterval()
    {
        return dataInterval;
    }

    /**
     * @param var {@code train_time} or {@code data_time}
     * @return a copy of everything reported so far for it (ns)
     * @throws IllegalArgumentException for another name
     */
    public synchronized Histogram total(final String var)
    {
        return totalOf(var).copy();
    }

    /**
     * @param var        {@code train_time} or {@code data_time}
     * @param percentile 0 to 100
     * @return that percentile over everything recorded so far (ns; 0 before the first value), allocation-free
     * @throws IllegalArgumentException for another name
     */
    public synchronized long percentile(final String var, final double percentile)
    {
        return totalOf(var).getValueAtPercentile(percentile);
    }

    /**
     * @param var {@code train_time} or {@code data_time}
     * @return values recorded so far
     */
    public synchronized long count(final String var)
    {
        return totalOf(var).getTotalCount();
    }

    private Histogram totalOf(final String var)
    {
        drain();
        return switch (var)
        {
            case "train_time" -> trainTotal;
            case "data_time" -> dataTotal;
            default -> throw new IllegalArgumentException("latency: expected train_time or data_time, got " + var);
        };
    }
}
