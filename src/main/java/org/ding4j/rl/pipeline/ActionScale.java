package org.ding4j.rl.pipeline;

import org.ding4j.env.Box;

/**
 * Maps the actor's actions, each entry in [-1, 1] (tanh-squashed or clipped), onto a bounded {@link Box}:
 * {@code center + half * a} per entry, in double, so that Pendulum's [-2, 2] torque is exactly {@code 2a}.
 */
public final class ActionScale
{
    private final double[] center;
    private final double[] half;

    /**
     * @param space the env's action space
     * @throws IllegalArgumentException if an entry is unbounded (an actor in [-1, 1] cannot cover it)
     */
    public ActionScale(final Box space)
    {
        if (!space.isBounded())
        {
            throw new IllegalArgumentException("expected an action space with finite bounds (the actor's [-1, 1] is "
                + "scaled onto them), got " + space);
        }
        final int n = space.flatSize();
        center = new double[n];
        half = new double[n];
        for (int k = 0; k < n; k++)
        {
            center[k] = ((double)space.high(k) + space.low(k)) / 2;
            half[k] = ((double)space.high(k) - space.low(k)) / 2;
        }
    }

    /**
     * Scales {@code rows} rows of actor actions into env actions.
     *
     * @param actor the actor's rows, each entry in [-1, 1]
     * @param env   receives the env's rows
     * @param rows  rows
     */
    public void apply(final float[] actor, final float[] env, final int rows)
    {
        final int n = center.length;
        for (int r = 0; r < rows; r++)
        {
            for (int k = 0; k < n; k++)
            {
                env[r * n + k] = (float)(center[k] + half[k] * actor[r * n + k]);
            }
        }
    }
}
