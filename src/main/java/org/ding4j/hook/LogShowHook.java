package org.ding4j.hook;

import org.ding4j.config.Config;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.LoggedModel;
import org.ding4j.log.ScalarDict;
import org.ding4j.log.TickMonitor;

/**
 * {@code log_show}: every call pushes the {@code scalar} buffer's declared variables into the monitor and steps its
 * tick; every {@code freq} iterations it logs {@code === Training Iteration {n} Result ===} and the table of
 * {@code {var}_avg} for the policy's monitor vars that have records, and writes them to the summary writer as
 * {@code {instance}_iter/{k}} (x = iteration) and {@code {instance}_step/{k}} (x = collector env step), histograms as
 * {@code {instance}/{k}}. A rank without a monitor does nothing. It does not clear the buffers: the learner
 * does that after the last {@code after_iter} hook, so that hooks after this one still see the iteration's vars.
 * <p>
 * The report itself is formatted, logged and written by a {@link LogReporter} thread, so the training thread
 * only copies averages into a preallocated slot: after warm-up the hook allocates nothing.
 */
public final class LogShowHook extends LearnerHook
{
    private final long freq;
    /** The monitor variable of each scalar-buffer slot (null: not a monitor variable), for {@link #boundMonitor}. */
    private LoggedModel.Variable[] bySlot = new LoggedModel.Variable[16];
    private TickMonitor boundMonitor;
    private int boundKeys = -1;
    private LogReporter reporter;
    /** Set by {@link #close()}: closed mid-dispatch (the learner closed from an earlier hook), it reports no more. */
    private volatile boolean closed;

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
    public void call(final HookContext context)
    {
        final LearnerLog log = context.log();
        final TickMonitor monitor = log.monitor();
        if (null == monitor)
        {
            return;
        }
        final LogBuffer buffer = log.buffer();
        record(buffer.scalar(), monitor);
        monitor.step();
        final long iteration = context.lastIter();
        if (0 == iteration % freq)
        {
            report(context, log, monitor, buffer, iteration);
        }
    }

    private void report(final HookContext context, final LearnerLog log, final TickMonitor monitor,
        final LogBuffer buffer, final long iteration)
    {
        if (closed)
        {
            // A reporter started now would be a thread nothing stops.
            return;
        }
        if (null == reporter)
        {
            reporter = new LogReporter(context.instanceName());
        }
        final LogReporter.Report report = reporter.claim();
        if (null == report)
        {
            return;
        }
        report.log = log;
        report.iteration = iteration;
        report.envstep = context.collectorEnvstep();
        for (final String var : log.monitorVars())
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
        closed = true;
        if (null != reporter)
        {
            reporter.close();
        }
    }

    /**
     * Pushes the buffer's declared entries into the monitor by slot: each slot's monitor variable is looked up by
     * name once (again only when keys are added or the monitor changes), not twice per value per call.
     */
    private void record(final ScalarDict scalars, final TickMonitor monitor)
    {
        final int keys = scalars.keyCount();
        if (monitor != boundMonitor || keys != boundKeys)
        {
            bind(scalars, monitor, keys);
        }
        final LoggedModel.Variable[] bySlot = this.bySlot;
        for (int i = 0; i < keys; i++)
        {
            final LoggedModel.Variable variable = bySlot[i];
            if (null != variable && scalars.isPresent(i))
            {
                variable.record(scalars.value(i));
            }
        }
    }

    private void bind(final ScalarDict scalars, final TickMonitor monitor, final int keys)
    {
        if (bySlot.length < keys)
        {
            bySlot = new LoggedModel.Variable[Math.max(keys, 2 * bySlot.length)];
        }
        for (int i = 0; i < keys; i++)
        {
            final String name = scalars.name(i);
            bySlot[i] = monitor.isDeclared(name) ? monitor.variable(name) : null;
        }
        boundMonitor = monitor;
        boundKeys = keys;
    }
}
