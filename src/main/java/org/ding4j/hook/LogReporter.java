package org.ding4j.hook;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.ding4j.learner.BaseLearner;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TextTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes {@code log_show}'s periodic report off the training thread: the hook copies the iteration's averages and
 * histograms into a preallocated {@link Report} slot (no allocation once slots have grown to size) and a daemon
 * thread formats the table, logs it and writes the summaries. Slots cycle through two Agrona one-to-one queues
 * (free and ready); when none is free the report is dropped and counted rather than blocking training.
 * {@link #close()} writes every report already handed over, then stops the thread.
 */
final class LogReporter implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(LogReporter.class);
    private static final int SLOTS = 8;

    private final OneToOneConcurrentArrayQueue<Report> free = new OneToOneConcurrentArrayQueue<>(SLOTS);
    private final OneToOneConcurrentArrayQueue<Report> ready = new OneToOneConcurrentArrayQueue<>(SLOTS);
    private final Thread thread;
    private volatile boolean closing;
    private long dropped;

    /** One report: averages by monitor-variable position, histograms by position in the buffer. */
    static final class Report
    {
        BaseLearner learner;
        long iteration;
        long envstep;
        String[] names = new String[0];
        double[] averages = new double[0];
        int count;
        String[] histogramNames = new String[0];
        double[][] histograms = new double[0][];
        int[] histogramLengths = new int[0];
        int histogramCount;

        void add(final String name, final double average)
        {
            if (count == names.length)
            {
                names = Arrays.copyOf(names, Math.max(8, count * 2));
                averages = Arrays.copyOf(averages, names.length);
            }
            names[count] = name;
            averages[count++] = average;
        }

        void addHistogram(final String name, final double[] values)
        {
            if (histogramCount == histogramNames.length)
            {
                final int size = Math.max(4, histogramCount * 2);
                histogramNames = Arrays.copyOf(histogramNames, size);
                histograms = Arrays.copyOf(histograms, size);
                histogramLengths = Arrays.copyOf(histogramLengths, size);
            }
            if (null == histograms[histogramCount] || histograms[histogramCount].length < values.length)
            {
                histograms[histogramCount] = new double[values.length];
            }
            System.arraycopy(values, 0, histograms[histogramCount], 0, values.length);
            histogramNames[histogramCount] = name;
            histogramLengths[histogramCount++] = values.length;
        }
    }

    LogReporter(final String name)
    {
        for (int i = 0; i < SLOTS; i++)
        {
            free.offer(new Report());
        }
        thread = new Thread(this::run, "ding4j-log-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** @return an empty slot to fill, or null (counted as a drop) when every slot is in use */
    Report claim()
    {
        final Report report = free.poll();
        if (null == report)
        {
            dropped++;
            if (0 == (dropped & (dropped - 1)))
            {
                // Powers of two only: a warning per drop would allocate on the training thread under overload.
                LOG.warn("log_show: {} reports dropped so far, the reporter thread is behind", dropped);
            }
            return null;
        }
        report.count = 0;
        report.histogramCount = 0;
        return report;
    }

    /** Hands a filled slot to the reporter thread. */
    void publish(final Report report)
    {
        ready.offer(report);
    }

    private void run()
    {
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 100_000, 10_000_000);
        while (true)
        {
            final Report report = ready.poll();
            if (null != report)
            {
                write(report);
                report.learner = null;
                free.offer(report);
                idle.reset();
            }
            else if (closing)
            {
                return;
            }
            else
            {
                idle.idle();
            }
        }
    }

    private static void write(final Report report)
    {
        final BaseLearner learner = report.learner;
        final Map<String, Double> vars = new LinkedHashMap<>();
        for (int i = 0; i < report.count; i++)
        {
            vars.put(report.names[i] + "_avg", report.averages[i]);
        }
        final LearnerLatency latency = learner.latency();
        latency.takeInterval();
        percentiles(vars, "train_time", latency.trainInterval());
        percentiles(vars, "data_time", latency.dataInterval());
        learner.info("=== Training Iteration " + report.iteration + " Result ===");
        learner.info("\n" + TextTable.horizontal(vars));
        final SummaryWriter tb = learner.tbLogger();
        if (null != tb)
        {
            final String instance = learner.instanceName();
            vars.forEach((k, v) -> {
                tb.addScalar(instance + "_iter/" + k, v, report.iteration);
                tb.addScalar(instance + "_step/" + k, v, report.envstep);
            });
            for (int i = 0; i < report.histogramCount; i++)
            {
                tb.addHistogram(instance + "/" + report.histogramNames[i],
                    Arrays.copyOf(report.histograms[i], report.histogramLengths[i]), report.iteration);
            }
        }
    }

    /** Adds p50/p99/max of one interval in milliseconds, as {@code {var}_p50_ms} etc., when it has samples. */
    private static void percentiles(final Map<String, Double> vars, final String var, final Histogram interval)
    {
        if (interval.getTotalCount() > 0)
        {
            vars.put(var + "_p50_ms", interval.getValueAtPercentile(50) / 1e6);
            vars.put(var + "_p99_ms", interval.getValueAtPercentile(99) / 1e6);
            vars.put(var + "_max_ms", interval.getMaxValue() / 1e6);
        }
    }

    /** Writes every report already published, then stops the thread (waits up to 10 s). */
    @Override
    public void close()
    {
        closing = true;
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
