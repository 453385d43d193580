package org.ding4j.example.dqn;

import org.ding4j.example.pipeline.OffPolicyRounds;

/**
 * DQN's part of the serial pipeline ({@link org.ding4j.example.pipeline.SerialLoop}): samples from the replay buffer
 * into one batch, collects epsilon-greedily with the online net, evaluates it when due, trains and feeds the
 * priorities back. Owns the batch.
 */
final class DqnRounds implements OffPolicyRounds, AutoCloseable
{
    private final DqnRun run;
    private final DqnBatch batch;
    private final boolean prioritized;

    DqnRounds(final DqnRun run)
    {
        this.run = run;
        this.batch = new DqnBatch(run.policy().settings().batchSize(), run.policy().settings().obs());
        this.prioritized = run.config().getBoolean("policy.other.replay_buffer.priority");
    }

    @Override
    public boolean sample()
    {
        return run.buffer().sample(batch);
    }

    @Override
    public boolean canSample()
    {
        return run.buffer().size() >= batch.size();
    }

    @Override
    public void collect(final int transitions)
    {
        run.collector().collect(run.policy().online(), transitions);
    }

    @Override
    public long envSteps()
    {
        return run.collector().envsteps();
    }

    @Override
    public void resume()
    {
        run.collector().resumeAt(Math.max(0, run.learner().collectorEnvstep()));
    }

    @Override
    public boolean evaluateIfDue(final long trainIter)
    {
        return run.evaluateIfDue(run.policy().online(), trainIter, run::saveBest);
    }

    @Override
    public void update()
    {
        run.learner().train(batch, run.collector().envsteps());
        if (prioritized)
        {
            run.buffer().updatePriorities(run.learner().priorities());
        }
    }

    @Override
    public void close()
    {
        batch.close();
    }
}
