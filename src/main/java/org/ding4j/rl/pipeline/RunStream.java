package org.ding4j.rl.pipeline;

import org.ding4j.env.ResumableRandom;

/**
 * The random streams a run's rank draws from besides its envs' starts, each seeded from the rank's seed by
 * {@link ResumableRandom#streamSeed}: apart from one another and from the envs, which take {@code seed + i}.
 */
public enum RunStream
{
    /** Which stored transitions each batch samples. */
    REPLAY,
    /** The collector's exploration (epsilon-greedy choices, random warm-up actions, exploration noise). */
    EXPLORATION,
    /** What the policy draws while it learns (target-policy noise, SAC's and PPO's sampled actions, PPO's shuffles). */
    POLICY;

    /**
     * @param rankSeed the rank's seed
     * @return this stream's seed on that rank
     */
    public long seed(final long rankSeed)
    {
        return ResumableRandom.streamSeed(rankSeed, ordinal());
    }
}
