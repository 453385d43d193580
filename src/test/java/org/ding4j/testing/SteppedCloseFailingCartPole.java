package org.ding4j.testing;

import org.ding4j.env.EnvWrapper;
import org.ding4j.env.StepResult;
import org.ding4j.rl.envs.CartPole;

/** A CartPole whose close() throws once it has stepped (the pipeline's probe for its spaces closes fine). */
public final class SteppedCloseFailingCartPole extends EnvWrapper
{
    private boolean stepped;

    /** A CartPole. */
    public SteppedCloseFailingCartPole()
    {
        super(new CartPole());
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        stepped = true;
        env.step(action, obs, result);
    }

    @Override
    public void close()
    {
        if (stepped)
        {
            throw new IllegalStateException("close failed");
        }
    }
}
