package org.ding4j.policy;

import java.util.Map;

/**
 * A policy that reports log vars without allocating: it registers its keys once and then writes primitives by
 * index into the {@link LogSink} the learner hands to each update. Exactly one update per call.
 */
public interface SinkPolicy extends Policy
{
    /**
     * Called once when the policy is set on a learner.
     *
     * @param sink where keys are registered; keep the returned indices
     */
    void registerLogVars(LogSink sink);

    /**
     * One update.
     *
     * @param data   the batch
     * @param kwargs extra arguments; never null
     * @param sink   where to write this update's log vars (and priorities)
     */
    void forward(Object data, Map<String, Object> kwargs, LogSink sink);

    /**
     * The map path is not used for a sink policy; the learner calls {@link #forward(Object, Map, LogSink)}.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default Object forward(final Object data, final Map<String, Object> kwargs)
    {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " reports through a LogSink");
    }
}
