package org.ding4j.env;

import java.util.Objects;

/**
 * Gymnasium's {@code Wrapper}: an {@link Env} that forwards every call to the env it wraps; a subclass overrides what
 * it changes.
 */
public abstract class EnvWrapper implements Env
{
    /** The wrapped environment. */
    protected final Env env;

    /** @param env the environment to wrap */
    protected EnvWrapper(final Env env)
    {
        this.env = Objects.requireNonNull(env, "env");
    }

    /** @return the wrapped environment */
    public final Env unwrapped()
    {
        return env instanceof EnvWrapper w ? w.unwrapped() : env;
    }

    @Override
    public Box observationSpace()
    {
        return env.observationSpace();
    }

    @Override
    public Space actionSpace()
    {
        return env.actionSpace();
    }

    @Override
    public void reset(final long seed, final float[] obs)
    {
        env.reset(seed, obs);
    }

    @Override
    public void reset(final float[] obs)
    {
        env.reset(obs);
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        env.step(action, obs, result);
    }

    @Override
    public long randomState()
    {
        return env.randomState();
    }

    @Override
    public void restoreRandomState(final long state)
    {
        env.restoreRandomState(state);
    }

    @Override
    public void close()
    {
        env.close();
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + "<" + env + ">";
    }
}
