package org.ding4j.policy;

import java.util.List;
import java.util.Map;

/**
 * A policy's learn mode as the learner drives it (DI-engine's {@code policy.learn_mode}), typed by its batch.
 * <p>
 * The learner calls {@link #registerLogVars} once when the policy is set, then {@link #forward} once per
 * {@code train(batch)} on the training thread. An update writes its log vars by index into the {@link LogSink}
 * (no allocation) and may report per-sample priorities as primitive arrays. A DI-engine style policy that returns
 * maps of log vars extends {@link MapPolicy}, which adapts its maps onto the same sink. Called from the training
 * thread only; a policy need not be thread-safe.
 *
 * @param <B> the batch type
 */
public interface Policy<B>
{
    /**
     * Called once when the policy is set on a learner.
     *
     * @param sink where keys are registered; keep the returned indices for {@link LogSink#put}
     */
    void registerLogVars(LogSink sink);

    /**
     * One update (or several, separated by {@link LogSink#nextUpdate()}).
     *
     * @param batch the batch
     * @param sink  where this update's log vars and priorities go
     */
    void forward(B batch, LogSink sink);

    /** @return the log vars the monitor averages and the log table shows */
    List<String> monitorVars();

    /**
     * DI-engine's {@code get_attribute('batch_size')}: how many samples the data loader asks its source for.
     *
     * @return the batch size, at least 1
     */
    int batchSize();

    /**
     * DI-engine's {@code get_attribute('device')}: where the data loader moves batches before {@link #forward}.
     *
     * @return a libtorch device string; {@code cpu} unless overridden
     */
    default String device()
    {
        return "cpu";
    }

    /** @return a description the learner logs when {@code log_policy} is on */
    default String info()
    {
        return getClass().getSimpleName();
    }

    /**
     * @return everything a resume needs (model, target model, optimizer, ...), tensors included; the checkpoint
     *         writer owns what it receives for the duration of the write
     */
    Map<String, Object> stateDict();

    /**
     * Restores a state produced by {@link #stateDict()} (less the learner's own {@code last_iter}/{@code last_step}
     * and what other parts registered with the checkpoints). Its tensors are valid during the call only (the reader
     * frees them afterwards): copy what you keep, as {@code FlatParameters.loadStateDict} does.
     *
     * @param state the state
     */
    void loadStateDict(Map<String, Object> state);
}
