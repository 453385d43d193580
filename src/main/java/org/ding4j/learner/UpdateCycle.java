package org.ding4j.learner;

import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.Hooks;
import org.ding4j.jfr.Jfr;
import org.ding4j.jfr.UpdateEvent;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.ScalarDict;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.PriorityFeedback;

/**
 * One update's bracket around the policy, and the policy's {@link LogSink}: {@code before_iter} hooks, the clock
 * started; the policy writes its vars by index into the {@code scalar} buffer, map-style values routed, priorities
 * copied; then {@code train_time}, {@code lastIter + 1}, the {@code after_iter} hooks and the buffers cleared (also
 * when a hook throws). A policy running several updates per call ends one and begins the next through
 * {@link #nextUpdate()}. Training thread only; allocates nothing, also while JFR records its {@link UpdateEvent}
 * (one event object, reused: one thread).
 */
final class UpdateCycle implements LogSink
{
    private final String instanceName;
    private final Hooks hooks;
    private final HookContext context;
    private final CountVar lastIter;
    private final LearnerLatency latency;
    private final LogBuffer buffer;
    private final ScalarDict scalar;
    private final PriorityFeedback priorities = new PriorityFeedback();
    private final int trainTimeIndex;
    private final int dataTimeIndex;
    /** Made at the first update recorded: until JFR is up no event class is loaded ({@link Jfr}). */
    private UpdateEvent event;
    private volatile long collectorEnvstep;
    /** Start of the update whose train_time is measured (the call, or the previous update of a multi-update call). */
    private long updateStart;
    /** The wait for the current update's batch, recorded by the data loader's loop; 0 when the caller passed it. */
    private long dataWait;
    /** The JFR event was begun for this update (recording may start or stop between two updates). */
    private boolean eventBegun;
    /** Updates still to end with {@link #sharedNs} as their time ({@link #shareTime}), and that share. */
    private int shared;
    private long sharedNs;

    UpdateCycle(final String instanceName, final Hooks hooks, final HookContext context, final CountVar lastIter,
        final LearnerLog log)
    {
        this.instanceName = instanceName;
        this.hooks = hooks;
        this.context = context;
        this.lastIter = lastIter;
        this.latency = log.latency();
        this.buffer = log.buffer();
        this.scalar = buffer.scalar();
        this.trainTimeIndex = scalar.register("train_time");
        this.dataTimeIndex = scalar.register("data_time");
    }

    /** Begins a training call's first update: a share of time a policy declared in an earlier call ends there. */
    void beginCall()
    {
        shared = 0;
        begin();
    }

    void begin()
    {
        hooks.call(HookPosition.BEFORE_ITER, context);
        eventBegun = Jfr.updates();
        if (eventBegun)
        {
            if (null == event)
            {
                event = new UpdateEvent();
            }
            event.begin();
        }
        updateStart = System.nanoTime();
    }

    void end()
    {
        final long elapsed = shared > 0 ? sharedNs : System.nanoTime() - updateStart;
        if (shared > 0)
        {
            shared--;
        }
        latency.recordTrainNs(elapsed);
        scalar.put(trainTimeIndex, elapsed * 1e-9);
        lastIter.add(1);
        if (eventBegun)
        {
            commitEvent(elapsed);
        }
        dataWait = 0;
        try
        {
            hooks.call(HookPosition.AFTER_ITER, context);
        }
        finally
        {
            buffer.clear();
        }
    }

    private void commitEvent(final long elapsed)
    {
        event.end();
        event.learner = instanceName;
        event.update = lastIter.val();
        event.envStep = collectorEnvstep;
        event.trainTime = elapsed;
        event.dataTime = dataWait;
        event.commit();
    }

    /** @return updates made and not yet reported: the rest of a {@link #shareTime} call's (ended ones counted off) */
    long updatesAhead()
    {
        return shared;
    }

    /** A failed update: the next one must not see its vars. */
    void abort()
    {
        dataWait = 0;
        shared = 0;
        buffer.clear();
    }

    /** @param ns the wait for the next update's batch: {@code data_time} */
    void dataWait(final long ns)
    {
        dataWait = ns;
        latency.recordDataNs(ns);
        scalar.put(dataTimeIndex, ns * 1e-9);
    }

    long collectorEnvstep()
    {
        return collectorEnvstep;
    }

    void collectorEnvstep(final long envstep)
    {
        collectorEnvstep = envstep;
    }

    PriorityFeedback priorities()
    {
        return priorities;
    }

    @Override
    public int register(final String key)
    {
        return scalar.register(key);
    }

    @Override
    public void put(final int index, final double value)
    {
        scalar.put(index, value);
    }

    @Override
    public void value(final String key, final Object value)
    {
        buffer.route(key, value);
    }

    @Override
    public void priority(final double[] values, final int valueCount, final int[] slots, final long[] ids,
        final int itemCount)
    {
        priorities.set(values, valueCount, slots, ids, itemCount);
    }

    @Override
    public void nextUpdate()
    {
        end();
        begin();
    }

    @Override
    public void shareTime(final int updates)
    {
        if (updates < 1)
        {
            throw new IllegalArgumentException("updates: expected at least 1, got " + updates);
        }
        sharedNs = (System.nanoTime() - updateStart) / updates;
        shared = updates;
    }
}
