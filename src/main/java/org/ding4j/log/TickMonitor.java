package org.ding4j.log;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * DI-engine's learner {@code TickMonitor}: a {@link LoggedModel} on a {@link TickTime} (stepped once per
 * {@code log_show} call) with the learner's base variables, plus {@code sample_count} and the policy's own when it
 * declares any (as {@code get_simple_monitor_type}). All are floats. Single-threaded.
 */
public final class TickMonitor extends LoggedModel
{
    /** The learner's base variables, as DI-engine's {@code TickMonitor} declares them. */
    public static final List<String> BASE_VARIABLES = List.of(
        "data_time", "train_time", "total_collect_step", "total_step", "total_sample", "total_episode",
        "total_duration");

    private final TickTime tick;

    /**
     * @param policyVariables the policy's {@code monitorVars()}
     * @param expire          window length in ticks, positive
     * @throws IllegalArgumentException if expire is not positive or a name repeats
     */
    public TickMonitor(final List<String> policyVariables, final long expire)
    {
        this(new TickTime(), policyVariables, expire);
    }

    private TickMonitor(final TickTime tick, final List<String> policyVariables, final long expire)
    {
        super(tick, expire);
        this.tick = tick;
        Objects.requireNonNull(policyVariables, "policyVariables");
        final List<String> names = new ArrayList<>(BASE_VARIABLES);
        if (!policyVariables.isEmpty())
        {
            names.add(2, "sample_count");
            names.addAll(policyVariables);
        }
        for (final String name : names)
        {
            declare(name, Double.class);
        }
    }

    /** @return the current tick */
    public long time()
    {
        return tick.tick();
    }

    /** Advances the tick by one. */
    public void step()
    {
        tick.step();
    }
}
