package org.ding4j.rl.pipeline;

/**
 * A replay buffer an {@link OffPolicyRun} samples its batches from (DQN's uniform or prioritized one, TD3's and
 * SAC's uniform one).
 *
 * @param <B> the batch type it fills
 */
public interface Replay<B>
{
    /**
     * @param batch filled with a sample of stored transitions
     * @return whether it was (false while fewer than a batch are stored)
     */
    boolean sample(B batch);

    /** @return the transitions stored */
    int size();
}
