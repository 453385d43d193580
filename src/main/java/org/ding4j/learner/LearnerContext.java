package org.ding4j.learner;

import org.ding4j.hook.Checkpoints;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.LogReducer;
import org.ding4j.log.LearnerLog;

/** What a learner's hooks see: counters, rank, logs, checkpoints, the log reducer; not the learner. */
final class LearnerContext implements HookContext
{
    private final BaseLearner<?> learner;

    LearnerContext(final BaseLearner<?> learner)
    {
        this.learner = learner;
    }

    @Override
    public long lastIter()
    {
        return learner.trainIter();
    }

    @Override
    public long updatesAhead()
    {
        return learner.updatesAhead();
    }

    @Override
    public long collectorEnvstep()
    {
        return learner.collectorEnvstep();
    }

    @Override
    public int rank()
    {
        return learner.rank();
    }

    @Override
    public int worldSize()
    {
        return learner.worldSize();
    }

    @Override
    public String instanceName()
    {
        return learner.instanceName();
    }

    @Override
    public LearnerLog log()
    {
        return learner.log();
    }

    @Override
    public Checkpoints checkpoints()
    {
        return learner.checkpoints();
    }

    @Override
    public LogReducer logReducer()
    {
        final LogReducer reducer = learner.logReducerOrNull();
        if (null == reducer)
        {
            throw new IllegalStateException("world size " + learner.worldSize() + " needs a log reducer: call "
                + "learner.distributed(...) or logReducer(...) with the process group's reducer");
        }
        return reducer;
    }
}
