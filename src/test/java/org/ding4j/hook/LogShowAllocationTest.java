package org.ding4j.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.management.ThreadMXBean;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.learner.BaseLearner;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TensorBoardWriter;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The periodic report in steady state allocates nothing on any of its three threads: the training thread (the hook
 * filling a slot), the reporter (table, text log, tags) and the TensorBoard writer (encoding). Counted with the JVM's
 * per-thread allocation counters, which see every TLAB and outside-TLAB allocation of a thread.
 */
@Tag("own-jvm")
class LogShowAllocationTest
{
    private static final ThreadMXBean THREADS = (ThreadMXBean)ManagementFactory.getThreadMXBean();
    private static final int WARM_UP_REPORTS = 10_000;
    private static final int MEASURED_REPORTS = 2_000;
    private static final int LOG_SHOW_EVERY = 10;

    @TempDir
    Path dir;

    @Test
    void shouldWriteReportsWithoutAllocatingOnTheTrainingReporterOrTensorBoardThread() throws IOException
    {
        final TensorBoardWriter tensorBoard = new TensorBoardWriter(dir.resolve("tb"));
        final ReporterProbe probe = new ReporterProbe(tensorBoard);
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("log_policy=false",
            "hook.log_show_after_iter=" + LOG_SHOW_EVERY, "hook.save_ckpt_after_iter=1000000000", "hook.save_ckpt_after_run=false"));
        try (BaseLearner<Object> learner = new BaseLearner<>(cfg, new FourScalars(), probe, DistInfo.single(),
            dir.toString(), "learner"))
        {
            final Object batch = List.of();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            report(learner, batch, probe, WARM_UP_REPORTS, deadline);
            tensorBoard.flush();
            final long tensorBoardBefore = THREADS.getThreadAllocatedBytes(threadId("ding4j-tensorboard"));
            final long trainingBefore = THREADS.getCurrentThreadAllocatedBytes();
            final long measuredFrom = System.nanoTime();
            report(learner, batch, probe, WARM_UP_REPORTS + MEASURED_REPORTS, deadline);
            final double measuredS = (System.nanoTime() - measuredFrom) / 1e9;
            final long training = THREADS.getCurrentThreadAllocatedBytes() - trainingBefore;
            tensorBoard.flush();
            final long tensorBoardBytes = THREADS.getThreadAllocatedBytes(threadId("ding4j-tensorboard"))
                - tensorBoardBefore;
            // The text log formats its time stamp once per wall-clock second (a few hundred bytes), so a slow,
            // loaded run may allocate that many times over: the budget counts the seconds the reports took.
            final long reporter = probe.measuredBytes.get();
            final long budget = 4_096 + 1_024 * (long)Math.ceil(measuredS);
            assertTrue(reporter < budget, "reporter thread allocated " + reporter + " B over " + MEASURED_REPORTS
                + " reports in " + measuredS + " s (budget " + budget + " B)");
            assertTrue(training < 1_024, "training thread allocated " + training + " B");
            assertTrue(tensorBoardBytes < 1_024, "TensorBoard thread allocated " + tensorBoardBytes + " B");
            assertEquals(0, tensorBoard.droppedCount());
        }
    }

    /**
     * Trains until the reporter has written {@code reports} reports, never more than four ahead of it, so that no
     * report is dropped (a drop's warning would be logged, and logging allocates). The reporter's count is the
     * synchronisation; the deadline turns a stuck reporter into a failure.
     */
    private static void report(final BaseLearner<Object> learner, final Object batch, final ReporterProbe probe,
        final int reports, final long deadline)
    {
        long issued = probe.reports.get();
        while (issued < reports)
        {
            for (int i = 0; i < LOG_SHOW_EVERY; i++)
            {
                learner.train(batch);
            }
            issued++;
            awaitWritten(probe, issued - 4, issued, deadline);
        }
        awaitWritten(probe, reports, reports, deadline);
    }

    /** Spins until the reporter has written {@code target} reports; past the deadline, fails naming the count. */
    private static void awaitWritten(final ReporterProbe probe, final long target, final long issued,
        final long deadline)
    {
        while (probe.reports.get() < target)
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("the reporter wrote " + probe.reports.get() + " of " + issued);
            }
            Thread.onSpinWait();
        }
    }

    private static long threadId(final String name)
    {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
            .orElseThrow(() -> new AssertionError("no thread " + name)).getId();
    }

    /**
     * Passes everything to the real TensorBoard writer; on the reporter's thread (which calls it) it counts reports
     * and reads that thread's allocation counter at the start and the end of the measured reports.
     */
    private static final class ReporterProbe implements SummaryWriter
    {
        private final TensorBoardWriter delegate;
        final AtomicLong reports = new AtomicLong();
        final AtomicLong measuredBytes = new AtomicLong(-1);
        private long startBytes;

        ReporterProbe(final TensorBoardWriter delegate)
        {
            this.delegate = delegate;
        }

        @Override
        public void addScalar(final String tag, final double value, final long step)
        {
            delegate.addScalar(tag, value, step);
            if ("learner_iter/cur_lr_avg".equals(tag))
            {
                final long count = reports.get();
                if (WARM_UP_REPORTS == count)
                {
                    startBytes = THREADS.getCurrentThreadAllocatedBytes();
                }
                else if (WARM_UP_REPORTS + MEASURED_REPORTS == count)
                {
                    measuredBytes.set(THREADS.getCurrentThreadAllocatedBytes() - startBytes);
                }
                reports.set(count + 1);
            }
        }

        @Override
        public void addHistogram(final String tag, final double[] values, final long step)
        {
            delegate.addHistogram(tag, values, step);
        }

        @Override
        public void flush()
        {
            delegate.flush();
        }

        @Override
        public void close()
        {
            delegate.close();
        }
    }

    /** Writes four scalars by index, as the benchmark's no-op policy does. */
    private static final class FourScalars implements Policy<Object>
    {
        private final int[] slots = new int[4];
        private double x;

        @Override
        public void registerLogVars(final LogSink sink)
        {
            slots[0] = sink.register("cur_lr");
            slots[1] = sink.register("total_loss");
            slots[2] = sink.register("q_value");
            slots[3] = sink.register("target_q_value");
        }

        @Override
        public void forward(final Object data, final LogSink sink)
        {
            x += 1.0;
            for (int i = 0; i < slots.length; i++)
            {
                sink.put(slots[i], i * x);
            }
        }

        @Override
        public List<String> monitorVars()
        {
            return List.of("cur_lr", "total_loss", "q_value", "target_q_value");
        }

        @Override
        public int batchSize()
        {
            return 1;
        }

        @Override
        public Map<String, Object> stateDict()
        {
            return Map.of();
        }

        @Override
        public void loadStateDict(final Map<String, Object> state)
        {
        }
    }
}
