package org.ding4j.rl.pipeline;

import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Module;
import org.ding4j.env.ResumableRandom;
import org.ding4j.learner.BaseLearner;
import org.ding4j.policy.Policy;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;

/**
 * An off-policy algorithm's half of one run, built by {@link OffPolicyAlgorithm#parts}: its policy, its replay,
 * its collector over a vector env and its evaluator. {@link OffPolicyRun} owns the other half (the learner, the
 * process group of a data-parallel job, the evaluation schedule, the checkpoints' extra state and the summary) and
 * calls these on the training thread (parallel mode: see {@link #actingCopy}).
 *
 * @param <B> the batch type its policy trains on
 */
public interface OffPolicyParts<B> extends AutoCloseable
{
    /** @return the policy the learner trains */
    Policy<B> policy();

    /** @return every optimizer the policy steps, in the same order on every rank (a data-parallel job averages their
     *     gradients; rank 0's parameters of each are broadcast at the start) */
    List<? extends FusedOptimizer<?>> optimizers();

    /** @return parameters outside the optimizers that every rank must start from rank 0's copy of (target nets) */
    List<FlatParameters> targets();

    /** @return the batch the run samples into and the learner trains */
    B batch();

    /** @return the batch's sample count */
    int batchSize();

    /** @return the replay the collector fills and the batches are sampled from */
    Replay<B> replay();

    /**
     * Collects at least {@code transitions} transitions with the current policy into the replay.
     *
     * @param transitions how many
     */
    void collect(int transitions);

    /** @return env steps this process collected so far (a resumed run's included) */
    long envSteps();

    /**
     * Continues a resumed run's env-step count (once, after the learner's {@code before_run} loaded it).
     *
     * @param envSteps the restored count (0 for a fresh run)
     */
    void resumeAt(long envSteps);

    /** @return the mean return of the current policy on the evaluation's episodes */
    double evaluate();

    /**
     * After each update: what the algorithm feeds back (DQN's priorities into a prioritized replay).
     *
     * @param learner the learner that trained the batch
     */
    default void afterUpdate(final BaseLearner<B> learner)
    {
    }

    /** @return the collector's exploration epsilon now, or NaN for an algorithm without one */
    default double epsilon()
    {
        return Double.NaN;
    }

    /** @return the random streams a checkpoint carries (exploration, replay sampling, env starts), rank 0's */
    Map<String, Object> randomState();

    /**
     * Continues the streams {@link #randomState()} saved.
     *
     * @param state what it gave
     * @throws IllegalArgumentException naming the entry that is missing or of the wrong type
     */
    void restoreRandomState(Map<?, ?> state);

    /**
     * On a rank other than 0 of a resumed data-parallel job: continues from {@code state} the streams every rank
     * shares (the evaluation's starts), and draws the rest from {@code fresh} instead of taking rank 0's saved ones
     * (it would explore and sample exactly as rank 0); {@code fresh} is keyed by the rank and the restored env step,
     * so that it replays none of the draws it made before.
     *
     * @param state what rank 0's {@link #randomState()} gave
     * @param fresh the stream to draw this rank's own states from
     */
    void ownRandomStreams(Map<?, ?> state, ResumableRandom fresh);

    /**
     * Parallel mode ({@code pipeline.mode: parallel}, {@link ParallelDriver}): a copy of the acting net for the
     * collector thread, which then collects into {@link #replay()} (so the replay must be thread-safe) and evaluates.
     *
     * @return a new copy, drawn from libtorch's generator and refreshed from the policy before use
     */
    ActingCopy actingCopy();

    /** @return a new batch of {@link #batchSize()} samples (parallel mode keeps a ring of them in flight) */
    B newBatch();

    /**
     * @return per optimizer (as {@link #optimizers()} lists them), the modules whose libtorch autograd backward a
     *     data-parallel run hands to c10d's Reducer ({@link org.ding4j.dist.DataParallel}: buckets all-reduced while
     *     backward runs); an empty list, or none at all (the default), keeps that optimizer on
     *     {@link org.ding4j.dist.GradientSync} (the fused updates, which overlap on their own)
     */
    default List<List<Module>> autogradModules()
    {
        return List.of();
    }

    /** Closes the envs, the replay's native buffers and the policy. */
    @Override
    void close();
}
