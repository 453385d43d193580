package org.ding4j.hook;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TextTable;
import org.ding4j.torch.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes {@code log_show}'s periodic report off the training thread: the hook copies the iteration's averages and
 * histograms into a preallocated {@link Report} slot (no allocation once slots have grown to size) and a daemon
 * thread formats the table, logs it and writes the summaries, also without allocating once it has seen every
 * variable name. Slots cycle through two Agrona one-to-one queues
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
        LearnerLog log;
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
        final ReportWriter writer = new ReportWriter(name);
        thread = Threads.newThread(() -> run(writer), "log-" + name);
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

    private void run(final ReportWriter writer)
    {
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 100_000, 10_000_000);
        while (true)
        {
            final Report report = ready.poll();
            if (null != report)
            {
                writer.write(report);
                report.log = null;
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

    /**
     * The reporter thread's reusable state: a column (table label and both TensorBoard tags) per variable name, built
     * the first time the name is seen, and the text and table buffers, so that a report allocates nothing once every
     * name has been seen (SLF4J's own copy of the text excepted, made only when its INFO level is on).
     */
    private static final class ReportWriter
    {
        private final String instance;
        private final Map<String, Column> columns = new HashMap<>();
        private final Map<String, String> histogramTags = new HashMap<>();
        private final Column[] trainPercentiles;
        private final Column[] dataPercentiles;
        private final TextTable table = new TextTable();
        private final StringBuilder text = new StringBuilder(2048);
        private Column[] shown = new Column[16];
        private String[] labels = new String[16];
        private double[] values = new double[16];
        private int count;

        ReportWriter(final String instance)
        {
            this.instance = instance;
            this.trainPercentiles = percentileColumns("train_time");
            this.dataPercentiles = percentileColumns("data_time");
        }

        private Column[] percentileColumns(final String var)
        {
            return new Column[] {
                new Column(var + "_p50_ms", instance), new Column(var + "_p99_ms", instance),
                new Column(var + "_max_ms", instance)};
        }

        void write(final Report report)
        {
            final LearnerLog log = report.log;
            count = 0;
            for (int i = 0; i < report.count; i++)
            {
                Column column = columns.get(report.names[i]);
                if (null == column)
                {
                    column = new Column(report.names[i] + "_avg", instance);
                    columns.put(report.names[i], column);
                }
                add(column, report.averages[i]);
            }
            final LearnerLatency latency = log.latency();
            latency.takeInterval();
            percentiles(trainPercentiles, latency.trainInterval());
            percentiles(dataPercentiles, latency.dataInterval());
            text.setLength(0);
            text.append("=== Training Iteration ").append(report.iteration).append(" Result ===");
            log.info(text);
            text.setLength(0);
            text.append('\n');
            table.append(text, labels, values, count);
            log.info(text);
            final SummaryWriter tb = log.tbLogger();
            if (null != tb)
            {
                for (int i = 0; i < count; i++)
                {
                    tb.addScalar(shown[i].iterTag, values[i], report.iteration);
                    tb.addScalar(shown[i].stepTag, values[i], report.envstep);
                }
                for (int i = 0; i < report.histogramCount; i++)
                {
                    tb.addHistogram(histogramTag(report.histogramNames[i]), report.histograms[i],
                        report.histogramLengths[i], report.iteration);
                }
            }
        }

        private String histogramTag(final String name)
        {
            String tag = histogramTags.get(name);
            if (null == tag)
            {
                tag = instance + "/" + name;
                histogramTags.put(name, tag);
            }
            return tag;
        }

        /** Adds p50/p99/max of one interval in milliseconds, as {@code {var}_p50_ms} etc., when it has samples. */
        private void percentiles(final Column[] columns, final Histogram interval)
        {
            if (interval.getTotalCount() > 0)
            {
                add(columns[0], interval.getValueAtPercentile(50) / 1e6);
                add(columns[1], interval.getValueAtPercentile(99) / 1e6);
                add(columns[2], interval.getMaxValue() / 1e6);
            }
        }

        private void add(final Column column, final double value)
        {
            if (count == shown.length)
            {
                shown = Arrays.copyOf(shown, 2 * count);
                labels = Arrays.copyOf(labels, 2 * count);
                values = Arrays.copyOf(values, 2 * count);
            }
            shown[count] = column;
            labels[count] = column.label;
            values[count++] = value;
        }
    }

    /** One table column and its two TensorBoard tags, {@code {instance}_iter/{label}} and {@code _step/}. */
    private static final class Column
    {
        final String label;
        final String iterTag;
        final String stepTag;

        Column(final String label, final String instance)
        {
            this.label = label;
            this.iterTag = instance + "_iter/" + label;
            this.stepTag = instance + "_step/" + label;
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
