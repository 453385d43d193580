package org.ding4j.env;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.IntFunction;

import org.ding4j.internal.Closing;

/**
 * {@code n} copies of an environment stepped together, as Gymnasium's vector envs: observations, rewards and flags in
 * flat arrays (row {@code i} is env {@code i}), one action row per env, nothing allocated per step.
 * <p>
 * Seeding follows Gymnasium: {@link #reset(long)} seeds env {@code i} with {@code seed + i}. Auto-reset is
 * Gymnasium's same-step mode: when a step ends env {@code i}'s episode (terminated or truncated), its final
 * observation goes to row {@code i} of {@link #finalObservations()} and the env is reset at once, so row {@code i} of
 * {@link #observations()} already holds the next episode's first observation; {@link #terminated()} and
 * {@link #truncated()} say which rows ended. A learner stores the final observation as the transition's next
 * observation. With {@link #autoReset(boolean) autoReset(false)} (Gymnasium's disabled mode, for evaluation) an
 * env whose episode ended is neither reset nor stepped again until the caller resets it: its row keeps the final
 * observation, its flags stay set and its reward is 0, and its generator draws nothing for a start nobody plays.
 * <p>
 * {@link #sync} steps the envs on the calling thread; {@link ThreadedVectorEnv} on worker threads. Either way every
 * env is stepped by one thread at a time and the arrays are the caller's to read between steps.
 */
public abstract sealed class VectorEnv implements AutoCloseable permits VectorEnv.Sync, ThreadedVectorEnv
{
    private final Env[] envs;
    private final Box observationSpace;
    private final Space actionSpace;
    private final int obsWidth;
    private final int actionWidth;
    private final float[] observations;
    private final float[] finalObservations;
    private final double[] rewards;
    private final boolean[] terminated;
    private final boolean[] truncated;
    private final float[][] actionRow;
    private final float[][] obsRow;
    private final StepResult[] results;
    private final boolean[] ended;
    private boolean autoReset = true;

    /**
     * @param factory makes env {@code i}
     * @param n       how many, >= 1
     * @throws IllegalArgumentException if {@code n < 1} or the envs' spaces differ (the envs made are closed
     *     before it is thrown, as they are when the factory fails)
     */
    VectorEnv(final IntFunction<? extends Env> factory, final int n)
    {
        Objects.requireNonNull(factory, "factory");
        if (n < 1)
        {
            throw new IllegalArgumentException("envs: expected >= 1, got " + n);
        }
        envs = new Env[n];
        try
        {
            for (int i = 0; i < n; i++)
            {
                envs[i] = Objects.requireNonNull(factory.apply(i), "env " + i);
            }
            observationSpace = Objects.requireNonNull(envs[0].observationSpace(), "observationSpace");
            actionSpace = Objects.requireNonNull(envs[0].actionSpace(), "actionSpace");
            for (int i = 1; i < n; i++)
            {
                if (!observationSpace.equals(envs[i].observationSpace())
                    || !actionSpace.equals(envs[i].actionSpace()))
                {
                    throw new IllegalArgumentException("env " + i + " (" + envs[i].getClass().getName()
                        + "): its spaces (" + envs[i].observationSpace() + ", " + envs[i].actionSpace()
                        + ") differ from env 0's (" + observationSpace + ", " + actionSpace + ")");
                }
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // Nobody else holds these envs yet: an env with threads or files of its own would outlive the failure.
            Closing.afterFailure(Arrays.asList(envs), ex);
            throw ex;
        }
        obsWidth = observationSpace.flatSize();
        actionWidth = actionSpace.flatSize();
        observations = new float[n * obsWidth];
        finalObservations = new float[n * obsWidth];
        rewards = new double[n];
        terminated = new boolean[n];
        truncated = new boolean[n];
        actionRow = new float[n][actionWidth];
        obsRow = new float[n][obsWidth];
        ended = new boolean[n];
        results = new StepResult[n];
        for (int i = 0; i < n; i++)
        {
            results[i] = new StepResult();
        }
    }

    /**
     * Envs stepped one after the other on the calling thread.
     *
     * @param factory makes env {@code i}
     * @param n       how many
     * @return the vector env (not reset yet)
     */
    public static VectorEnv sync(final IntFunction<? extends Env> factory, final int n)
    {
        return new Sync(factory, n);
    }

    /** @return the number of envs */
    public final int size()
    {
        return envs.length;
    }

    /** @return env {@code i} */
    public final Env env(final int i)
    {
        return envs[i];
    }

    /** @return one env's observation space */
    public final Box observationSpace()
    {
        return observationSpace;
    }

    /** @return one env's action space */
    public final Space actionSpace()
    {
        return actionSpace;
    }

    /** @return the current observations, {@code [n, obs]} row-major (read between steps) */
    public final float[] observations()
    {
        return observations;
    }

    /** @return the final observations of the rows whose episode ended at the last step */
    public final float[] finalObservations()
    {
        return finalObservations;
    }

    /** @return the rewards of the last step */
    public final double[] rewards()
    {
        return rewards;
    }

    /** @return which envs' episodes terminated at the last step */
    public final boolean[] terminated()
    {
        return terminated;
    }

    /** @return which envs' episodes were truncated at the last step */
    public final boolean[] truncated()
    {
        return truncated;
    }

    /**
     * @param enable whether an env whose episode ended is reset on the same step (the default) or left ended until
     *               the caller resets it (see the class comment)
     */
    public final void autoReset(final boolean enable)
    {
        autoReset = enable;
    }

    /**
     * Seeds env {@code i} with {@code seed + i} and starts an episode in each.
     *
     * @param seed the base seed
     */
    public final void reset(final long seed)
    {
        for (int i = 0; i < envs.length; i++)
        {
            envs[i].reset(seed + i, obsRow[i]);
            System.arraycopy(obsRow[i], 0, observations, i * obsWidth, obsWidth);
            ended[i] = false;
        }
    }

    /** Starts a new episode in every env from its generator as it stands. */
    public final void reset()
    {
        for (int i = 0; i < envs.length; i++)
        {
            resetEnv(i);
        }
    }

    /** Starts a new episode in env {@code i} from its generator as it stands. */
    public final void resetEnv(final int i)
    {
        envs[i].reset(obsRow[i]);
        System.arraycopy(obsRow[i], 0, observations, i * obsWidth, obsWidth);
        ended[i] = false;
    }

    /**
     * Steps every env with its row of {@code actions}, resetting those whose episode ended (see the class comment).
     *
     * @param actions {@code [n, action]} row-major
     * @throws IllegalArgumentException if {@code actions} is not {@code n} action rows long
     */
    public final void step(final float[] actions)
    {
        if (actions.length != envs.length * actionWidth)
        {
            throw new IllegalArgumentException("actions: expected " + envs.length + " x " + actionWidth + " = "
                + envs.length * actionWidth + " floats, got " + actions.length);
        }
        stepAll(actions);
    }

    /** Steps every env once ({@link #stepOne} for each, on whatever threads the subclass uses). */
    abstract void stepAll(float[] actions);

    /** Steps env {@code i}: the work of one env, on the thread that owns it for this step. */
    final void stepOne(final int i, final float[] actions)
    {
        if (ended[i])
        {
            rewards[i] = 0;
            return;
        }
        final float[] action = actionRow[i];
        final float[] obs = obsRow[i];
        final StepResult result = results[i];
        System.arraycopy(actions, i * actionWidth, action, 0, actionWidth);
        envs[i].step(action, obs, result);
        rewards[i] = result.reward();
        terminated[i] = result.terminated();
        truncated[i] = result.truncated();
        if (result.done())
        {
            System.arraycopy(obs, 0, finalObservations, i * obsWidth, obsWidth);
            if (autoReset)
            {
                envs[i].reset(obs);
            }
            else
            {
                ended[i] = true;
            }
        }
        System.arraycopy(obs, 0, observations, i * obsWidth, obsWidth);
    }

    /** @return each env's generator state ({@link Env#randomState()}), for a checkpoint */
    public final long[] randomStates()
    {
        final long[] states = new long[envs.length];
        for (int i = 0; i < envs.length; i++)
        {
            states[i] = envs[i].randomState();
        }
        return states;
    }

    /**
     * Continues each env's generator from a checkpoint: the next reset of each env draws what it would have drawn
     * when the states were saved. The observations are not touched; a caller that steps on resets first (the
     * episodes in progress were not saved).
     *
     * @param states from {@link #randomStates()}
     * @throws IllegalArgumentException if the count differs from the number of envs
     */
    public final void restoreRandomStates(final long[] states)
    {
        if (states.length != envs.length)
        {
            throw new IllegalArgumentException("random states: expected " + envs.length + " (one per env), got "
                + states.length);
        }
        for (int i = 0; i < envs.length; i++)
        {
            envs[i].restoreRandomState(states[i]);
        }
    }

    /**
     * Closes every env, each one even when an earlier one's close throws.
     *
     * @throws RuntimeException the first env's failure, the later ones' added to it as suppressed
     */
    @Override
    public void close()
    {
        Closing.all(envs);
    }

    /** Steps the envs one after the other on the calling thread. */
    static final class Sync extends VectorEnv
    {
        Sync(final IntFunction<? extends Env> factory, final int n)
        {
            super(factory, n);
        }

        @Override
        void stepAll(final float[] actions)
        {
            for (int i = 0; i < size(); i++)
            {
                stepOne(i, actions);
            }
        }
    }
}
