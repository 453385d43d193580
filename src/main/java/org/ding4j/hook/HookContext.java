package org.ding4j.hook;

import org.ding4j.log.LearnerLog;

/**
 * What a hook may read and do, handed to {@link LearnerHook#call} by the learner: the counters, the rank, the logs
 * of the current iteration, the checkpoints and the log reducer; not the learner itself. Valid on the training
 * thread during the call.
 * <p>
 * At {@code after_iter} the log buffers ({@code log().buffer()}) hold the iteration's log vars for every hook, at
 * any priority: the learner clears them after the last {@code after_iter} hook has run.
 */
public interface HookContext
{
    /** @return completed updates (DI-engine's {@code last_iter.val}) */
    long lastIter();

    /**
     * @return updates the policy has already made beyond {@link #lastIter()}, whose iterations are still to be
     *         reported: a native call that runs a rollout's minibatches at once reports them afterwards
     *         ({@link org.ding4j.policy.LogSink#shareTime}), so the weights a hook sees, and a checkpoint it saves,
     *         are those of update {@code lastIter() + updatesAhead()}; 0 for a policy that reports each update as it
     *         makes it (the default, for a context of one's own)
     */
    default long updatesAhead()
    {
        return 0;
    }

    /** @return the collector env step of the last update (-1 if unknown) */
    long collectorEnvstep();

    /** @return this process's rank */
    int rank();

    /** @return the world size */
    int worldSize();

    /** @return the learner's instance name */
    String instanceName();

    /** @return the learner's logs: buffers, monitor, TensorBoard writer, latency, text log */
    LearnerLog log();

    /** @return the learner's checkpoints */
    Checkpoints checkpoints();

    /**
     * @return the log reducer ({@link LogReducer#IDENTITY} for one rank)
     * @throws IllegalStateException for world size > 1 when no backend was set
     */
    LogReducer logReducer();
}
