package org.ding4j.hook;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ObjDoubleConsumer;

import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TextTable;
import org.ding4j.log.TickMonitor;

/**
 * {@code log_show}: every call pushes the {@code scalar} buffer's declared variables into the monitor and steps its
 * tick; every {@code freq} iterations it logs {@code === Training Iteration {n} Result ===} and the table of
 * {@code {var}_avg} for the policy's monitor vars that have records, and writes them to the summary writer as
 * {@code {instance}_iter/{k}} (x = iteration) and {@code {instance}_step/{k}} (x = collector env step), histograms as
 * {@code {instance}/{k}}. Then it clears every buffer, on every rank; a rank without a monitor only clears.
 * <p>
 * Between reports it allocates nothing.
 */
public final class LogShowHook extends LearnerHook
{
    private final long freq;
    private final Recorder recorder = new Recorder();

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

    private static void report(
        final BaseLearner learner, final TickMonitor monitor, final LogBuffer buffer, final long iteration)
    {
        final Map<String, Double> vars = new LinkedHashMap<>();
        for (final String var : learner.policy().monitorVars())
        {
            if (monitor.hasRecord(var))
            {
                vars.put(var + "_avg", monitor.avg(var));
            }
        }
        learner.info("=== Training Iteration " + iteration + " Result ===");
        learner.info("\n" + TextTable.horizontal(vars));
        final SummaryWriter tb = learner.tbLogger();
        if (null != tb)
        {
            final String instance = learner.instanceName();
            vars.forEach((k, v) -> {
                tb.addScalar(instance + "_iter/" + k, v, iteration);
                tb.addScalar(instance + "_step/" + k, v, learner.collectorEnvstep());
            });
            buffer.histogram().forEach((k, v) -> tb.addHistogram(instance + "/" + k, v, iteration));
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
