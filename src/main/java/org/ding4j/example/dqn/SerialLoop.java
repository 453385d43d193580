package org.ding4j.example.dqn;

import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.TrainingLoop;

/**
 * DI-engine's {@code serial_pipeline} as the learner's {@link TrainingLoop}: each collect cycle evaluates when due,
 * collects {@code n_sample} transitions and grants {@code update_per_collect} updates; each update samples a batch,
 * trains it and feeds the priorities back. The run ends when an evaluation solves it, or after the cycle that
 * reaches {@code max_env_step} or {@code max_train_iter}. The learner's run votes before every update (within a
 * collect cycle on the log reduce), so a signal stops it within one update on every rank.
 */
final class SerialLoop implements TrainingLoop, AutoCloseable
{
    private final DqnRun run;
    private final BaseLearner<DqnBatch> learner;
    private final DqnPolicy policy;
    private final ReplayBuffer buffer;
    private final Collector collector;
    private final DqnBatch batch;
    private final int nSample;
    private final int updatePerCollect;
    private final long maxEnvStep;
    private final long maxTrainIter;
    private final boolean prioritized;
    /** Updates left in this collect cycle. */
    private int left;
    private boolean collected;

    SerialLoop(final DqnRun run)
    {
        this.run = run;
        this.learner = run.learner();
        this.policy = run.policy();
        this.buffer = run.buffer();
        this.collector = run.collector();
        this.batch = new DqnBatch(policy.settings().batchSize(), policy.settings().obs());
        this.nSample = run.config().getInt("policy.collect.n_sample");
        this.updatePerCollect = run.config().getInt("policy.learn.update_per_collect");
        this.maxEnvStep = run.config().getLong("pipeline.max_env_step");
        this.maxTrainIter = run.config().getLong("pipeline.max_train_iter");
        this.prioritized = run.config().getBoolean("policy.other.replay_buffer.priority");
        // before_run (a resume's load_ckpt) has run when the first prepare() comes; resumeAt is idempotent.
    }

    @Override
    public boolean prepare()
    {
        while (true)
        {
            if (left > 0 && learner.trainIter() < maxTrainIter && buffer.sample(batch))
            {
                left--;
                return true;
            }
            // The cycle is over.
            if (!collected)
            {
                collector.resumeAt(Math.max(0, learner.collectorEnvstep()));
            }
            else if (collector.envsteps() >= maxEnvStep || learner.trainIter() >= maxTrainIter)
            {
                return false;
            }
            if (run.evaluateIfDue(policy.online(), learner.trainIter(), run::saveBest))
            {
                return false;
            }
            collector.collect(policy.online(), nSample);
            learner.collectorEnvstep(collector.envsteps());
            collected = true;
            left = updatePerCollect;
        }
    }

    /**
     * Within a collect cycle the next batch is a sample of a buffer that only grows; at its end the next collect
     * may end the run (env steps, an evaluation), so it is not promised.
     */
    @Override
    public boolean nextReady()
    {
        return left > 0 && learner.trainIter() < maxTrainIter && buffer.size() >= batch.size();
    }

    @Override
    public void update()
    {
        learner.train(batch, collector.envsteps());
        if (prioritized)
        {
            buffer.updatePriorities(learner.priorities());
        }
    }

    @Override
    public void close()
    {
        batch.close();
    }
}
