package org.ding4j.env;

/**
 * An {@link Env} whose episodes draw from one {@link ResumableRandom} (as Gymnasium's {@code np_random}, seeded by
 * {@code reset(seed=...)}): {@link #reset(long, float[])} seeds it and starts an episode, and the checkpoint methods
 * save and continue it. A subclass draws its starts from {@link #random} in {@link #reset(float[])}.
 */
public abstract class SeededEnv implements Env
{
    /** The generator every episode start (and any other draw of the env) comes from. */
    protected final ResumableRandom random = new ResumableRandom(0);

    @Override
    public final void reset(final long seed, final float[] obs)
    {
        random.state(seed);
        reset(obs);
    }

    @Override
    public final long randomState()
    {
        return random.state();
    }

    @Override
    public final void restoreRandomState(final long state)
    {
        random.state(state);
    }
}
