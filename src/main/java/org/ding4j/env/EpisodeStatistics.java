package org.ding4j.env;

/**
 * Gymnasium's {@code RecordEpisodeStatistics}: counts the episodes that ended and keeps the undiscounted return and
 * length of the last one. Allocates nothing. Read from the thread that steps the env.
 */
public final class EpisodeStatistics extends EnvWrapper
{
    private double episodeReturn;
    private int episodeLength;
    private double lastReturn = Double.NaN;
    private int lastLength;
    private long episodes;

    /** @param env the environment */
    public EpisodeStatistics(final Env env)
    {
        super(env);
    }

    @Override
    public void reset(final long seed, final float[] obs)
    {
        clear();
        env.reset(seed, obs);
    }

    @Override
    public void reset(final float[] obs)
    {
        clear();
        env.reset(obs);
    }

    private void clear()
    {
        episodeReturn = 0;
        episodeLength = 0;
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        env.step(action, obs, result);
        episodeReturn += result.reward();
        episodeLength++;
        if (result.done())
        {
            lastReturn = episodeReturn;
            lastLength = episodeLength;
            episodes++;
        }
    }

    /** @return the return of the episode in progress */
    public double episodeReturn()
    {
        return episodeReturn;
    }

    /** @return the return of the last episode that ended, NaN before the first */
    public double lastReturn()
    {
        return lastReturn;
    }

    /** @return the length of the last episode that ended */
    public int lastLength()
    {
        return lastLength;
    }

    /** @return episodes ended so far */
    public long episodes()
    {
        return episodes;
    }
}
