package org.ding4j.testing;

import org.ding4j.env.EnvWrapper;
import org.ding4j.rl.envs.CartPole;

/** A CartPole whose episodes start with a NaN angle: every algorithm's collector and evaluator must refuse it. */
public final class NanResetCartPole extends EnvWrapper
{
    /** A CartPole. */
    public NanResetCartPole()
    {
        super(new CartPole());
    }

    @Override
    public void reset(final float[] obs)
    {
        env.reset(obs);
        obs[2] = Float.NaN;
    }

    @Override
    public void reset(final long seed, final float[] obs)
    {
        env.reset(seed, obs);
        obs[2] = Float.NaN;
    }
}
