package org.ding4j.hook;

import java.util.function.ObjDoubleConsumer;

import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.TickMonitor;
import org.ding4j.policy.Policy;

/**
 * {@code log_show}: every call pushes the {@code scalar} buffer's declared variables into the monitor and steps its
 * tick; every {@code freq} iterations it logs {@code === Training Iteration {n} Result ===} and the table of
 * {@code {var}_avg} for the policy's monitor vars that have records, and writes them to the summary writer as
 * {@code {instance}_iter/{k}} (x = iteration) and {@code {instance}_step/{k}} (x = collector env step), histograms as
 * {@code {instance}/{k}}. Then it clears every buffer, on every rank; a rank without a monitor only clears.
 * <p>
 * The report itself is formatted, logged and written by a {@link LogReporter} thread, so the training thread
 * only copies averages into a preallocated slot: after warm-up the hook allocates nothing.
 */
public final class LogShowHook extends LearnerHook
{
    private final long freq;
    private final Recorder recorder = new Recorder();
    private LogReporter reporter;
    private Policy varsOf;
    private String[] vars;

    /**
     * @param name     hook name
     * @param priority priority
     * @param position where it runs (after_iter)
     * @param extArgs  {@code freq}: report every this many iterations (default 1)
     * @throws IllegalArgumentException if freq is not a positive integer
     */
    public LogShowHook(final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        super(name, priority, position);
        this.freq = freq(extArgs);
    }

    @Override
    public void call(final BaseLearner learner)
    {
        final LogBuffer buffer = learner.logBuffer();
        final TickMonitor monitor = learner.monitor();
        if (null == monitor)
        {
            buffer.clear();
            return;
        }
        recorder.monitor = monitor;
        buffer.scalar().forEach(recorder);
        monitor.step();
        final long iteration = learner.lastIter().val();
        if (0 == iteration % freq)
        {
            report(learner, monitor, buffer, iteration);
        }
        buffer.clear();
    }

    private void report(
        final BaseLearner learner, final TickMonitor monitor, final LogBuffer buffer, final long iteration)
    {
        if (null == reporter)
        {
            reporter = new LogReporter(learner.instanceName());
        }
        final LogReporter.Report report = reporter.claim();
        if (null == report)
        {
            return;
        }
        report.learner = learner;
        report.iteration = iteration;
        report.envstep = learner.collectorEnvstep();
        final Policy policy = learner.policy();
        if (policy != varsOf)
        {
            // monitorVars() may build a new list per call; read it once per policy.
            vars = policy.monitorVars().toArray(new String[0]);
            varsOf = policy;
        }
        for (final String var : vars)
        {
            if (monitor.hasRecord(var))
            {
                report.add(var, monitor.avg(var));
            }
        }
        if (!buffer.histogram().isEmpty())
        {
            buffer.histogram().forEach(report::addHistogram);
        }
        reporter.publish(report);
    }

    /** Writes the reports already taken, then stops the reporter thread. */
    @Override
    public void close()
    {
        if (null != reporter)
        {
            reporter.close();
        }
    }

    /** Pushes declared scalar-buffer entries into the monitor; one instance, reused, so no lambda per call. */
    private static final class Recorder implements ObjDoubleConsumer<String>
    {
        private TickMonitor monitor;

        @Override
        public void accept(final String name, final double value)
        {
            if (monitor.isDeclared(name))
            {
                monitor.record(name, value);
            }
        }
    }
}
