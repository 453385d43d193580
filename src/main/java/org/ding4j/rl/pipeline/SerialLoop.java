package org.ding4j.rl.pipeline;

import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.TrainingLoop;

/**
 * DI-engine's {@code serial_pipeline} as the learner's {@link TrainingLoop}, for every off-policy algorithm: each
 * round evaluates when due, collects {@code n_sample} transitions and grants {@code update_per_collect} updates;
 * each update samples a batch and trains it. The run ends when an evaluation solves it, or after the round that
 * reaches {@code max_env_step} or {@code max_train_iter}. The learner's run votes before every update (within a round
 * on the log reduce, {@link #nextReady()}), so a signal stops it within one update on every rank.
 */
public final class SerialLoop implements TrainingLoop
{
    private final BaseLearner<?> learner;
    private final OffPolicyRounds rounds;
    private final int nSample;
    private final int updatePerCollect;
    private final long maxEnvStep;
    private final long maxTrainIter;
    /** Updates left in this round. */
    private int left;
    private boolean collected;

    /**
     * @param learner          the learner that trains
     * @param rounds           the algorithm's replay, collector, evaluation and update
     * @param nSample          transitions per round
     * @param updatePerCollect updates per round
     * @param maxEnvStep       the env-step limit
     * @param maxTrainIter     the update limit
     */
    public SerialLoop(final BaseLearner<?> learner, final OffPolicyRounds rounds, final int nSample,
        final int updatePerCollect, final long maxEnvStep, final long maxTrainIter)
    {
        this.learner = learner;
        this.rounds = rounds;
        this.nSample = nSample;
        this.updatePerCollect = updatePerCollect;
        this.maxEnvStep = maxEnvStep;
        this.maxTrainIter = maxTrainIter;
    }

    @Override
    public boolean prepare()
    {
        while (true)
        {
            if (left > 0 && learner.trainIter() < maxTrainIter && rounds.sample())
            {
                left--;
                return true;
            }
            // The round is over. before_run (a resume's load) has run when the first prepare() comes.
            if (!collected)
            {
                rounds.resume();
            }
            else if (rounds.envSteps() >= maxEnvStep || learner.trainIter() >= maxTrainIter)
            {
                return false;
            }
            if (rounds.evaluateIfDue(learner.trainIter()))
            {
                return false;
            }
            final long before = rounds.envSteps();
            rounds.collect(nSample);
            if (rounds.envSteps() == before)
            {
                // A stop cut the collection short before its first step: no data will come, the run ends (the
                // learner's vote then says why: a signal is an interrupted run).
                return false;
            }
            learner.collectorEnvstep(rounds.envSteps());
            collected = true;
            left = updatePerCollect;
        }
    }

    /**
     * Within a round the next batch is a sample of a buffer that only grows; at its end the next collect may end the
     * run (env steps, an evaluation), so it is not promised.
     */
    @Override
    public boolean nextReady()
    {
        return left > 0 && learner.trainIter() < maxTrainIter && rounds.canSample();
    }

    @Override
    public void update()
    {
        rounds.update();
    }
}
