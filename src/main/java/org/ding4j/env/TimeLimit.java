package org.ding4j.env;

/**
 * Gymnasium's {@code TimeLimit}: the episode is truncated at its {@code maxEpisodeSteps}-th step, so a learner still
 * bootstraps from the final observation; a step that also terminated the episode is both (as in Gymnasium), and
 * terminated wins for the bootstrap.
 */
public final class TimeLimit extends EnvWrapper
{
    private final int maxEpisodeSteps;
    private int elapsed;

    /**
     * @param env             the environment
     * @param maxEpisodeSteps steps per episode, >= 1
     */
    public TimeLimit(final Env env, final int maxEpisodeSteps)
    {
        super(env);
        if (maxEpisodeSteps < 1)
        {
            throw new IllegalArgumentException("max_episode_steps: expected >= 1, got " + maxEpisodeSteps);
        }
        this.maxEpisodeSteps = maxEpisodeSteps;
    }

    @Override
    public void reset(final long seed, final float[] obs)
    {
        elapsed = 0;
        env.reset(seed, obs);
    }

    @Override
    public void reset(final float[] obs)
    {
        elapsed = 0;
        env.reset(obs);
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        env.step(action, obs, result);
        if (++elapsed >= maxEpisodeSteps)
        {
            result.truncate();
        }
    }

    /** @return steps taken in the current episode */
    public int elapsedSteps()
    {
        return elapsed;
    }

    /** @return the limit */
    public int maxEpisodeSteps()
    {
        return maxEpisodeSteps;
    }
}
