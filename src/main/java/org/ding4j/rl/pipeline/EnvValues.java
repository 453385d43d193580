package org.ding4j.rl.pipeline;

import org.ding4j.env.VectorEnv;

/**
 * The check each collector makes on what an environment returned, before it is stored: a NaN or infinite reward or
 * observation would reach the update as a NaN loss and train every net after it on nothing, so it is refused at once,
 * naming the value, its index and the transition or env it came with. Allocates only to throw.
 */
public final class EnvValues
{
    /**
     * A NaN or infinite value from an environment: an {@link IllegalArgumentException} to whoever stored it, of its own
     * type so that a caller can tell the environment's fault from a bad argument of its own ({@code ding4j eval}
     * reports it as a failure, not as a bad checkpoint).
     */
    public static final class NonFiniteValueException extends IllegalArgumentException
    {
        private static final long serialVersionUID = 1L;

        NonFiniteValueException(final String message)
        {
            super(message);
        }
    }

    private EnvValues()
    {
    }

    /**
     * @param what   what the value is ({@code "reward"}, {@code "n-step return"})
     * @param reward the value
     * @param unit   what {@code index} counts ({@code "transition"}, {@code "env"})
     * @param index  which one
     * @throws NonFiniteValueException naming the value and where it came from, if it is NaN or infinite
     */
    public static void requireFinite(final String what, final double reward, final String unit, final long index)
    {
        if (!Double.isFinite(reward))
        {
            throw new NonFiniteValueException(what + ": expected a finite value from the environment, got " + reward
                + " (" + unit + " " + index + ")");
        }
    }

    /**
     * The reward and observation one env of a vector env returned from its last step, as an evaluator reads them.
     *
     * @param envs the envs, just stepped
     * @param i    which env
     * @param unit what {@code i} counts ({@code "evaluation env"})
     * @throws NonFiniteValueException naming the first NaN or infinite value and the env it came from
     */
    public static void requireFiniteStep(final VectorEnv envs, final int i, final String unit)
    {
        requireFinite("reward", envs.rewards()[i], unit, i);
        final int width = envs.observationSpace().flatSize();
        requireFinite("observation", envs.observations(), i * width, width, unit, i);
    }

    /**
     * The observations every env of a vector env returned from its reset, as an evaluator acts on them.
     *
     * @param envs the envs, just reset
     * @param unit what an env is called ({@code "evaluation env"})
     * @throws NonFiniteValueException naming the first NaN or infinite value and the env it came from
     */
    public static void requireFiniteReset(final VectorEnv envs, final String unit)
    {
        final int width = envs.observationSpace().flatSize();
        for (int i = 0; i < envs.size(); i++)
        {
            requireFinite("observation after reset", envs.observations(), i * width, width, unit, i);
        }
    }

    /**
     * @param what   what the values are ({@code "observation"}, {@code "next observation"})
     * @param values the array holding them
     * @param at     the first one's index in it
     * @param width  how many
     * @param unit   what {@code index} counts ({@code "transition"}, {@code "env"})
     * @param index  which one
     * @throws NonFiniteValueException naming the first NaN or infinite value, its index within the row and where it
     *                                 came from
     */
    public static void requireFinite(final String what, final float[] values, final int at, final int width,
        final String unit, final long index)
    {
        for (int k = 0; k < width; k++)
        {
            if (!Float.isFinite(values[at + k]))
            {
                throw new NonFiniteValueException(what + ": expected finite values from the environment, got "
                    + values[at + k] + " at index " + k + " (" + unit + " " + index + ")");
            }
        }
    }
}
