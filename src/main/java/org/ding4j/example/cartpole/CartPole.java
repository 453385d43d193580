package org.ding4j.example.cartpole;

import org.ding4j.example.dqn.ResumableRandom;

/**
 * The classic cart-pole task (Barto, Sutton and Anderson 1983, as gym's {@code CartPole-v0/v1}), vectorised over
 * {@code n} independent environments held in flat primitive arrays: gravity 9.8, cart mass 1.0, pole mass 0.1,
 * half pole length 0.5, force 10, tau 0.02 with explicit Euler steps. An episode ends when {@code |x| > 2.4},
 * {@code |theta| > 12 degrees}, or after {@code maxSteps} steps (200 as v0, 500 as v1); every step, the final one
 * included, gives reward 1. Starts are uniform in {@code [-0.05, 0.05]^4}, drawn from each environment's own seeded
 * generator, so a seed fixes every trajectory. Stepping allocates nothing. Not thread-safe.
 */
public final class CartPole
{
    /** Observation width: x, x_dot, theta, theta_dot. */
    public static final int OBS = 4;
    /** Actions: 0 pushes left, 1 pushes right. */
    public static final int ACTIONS = 2;

    private static final double GRAVITY = 9.8;
    private static final double MASS_CART = 1.0;
    private static final double MASS_POLE = 0.1;
    private static final double TOTAL_MASS = MASS_CART + MASS_POLE;
    private static final double LENGTH = 0.5;
    private static final double POLE_MASS_LENGTH = MASS_POLE * LENGTH;
    private static final double FORCE = 10.0;
    private static final double TAU = 0.02;
    private static final double THETA_LIMIT = 12 * 2 * Math.PI / 360;
    private static final double X_LIMIT = 2.4;

    private final int n;
    private final int maxSteps;
    private final double[] state;
    private final int[] steps;
    private final ResumableRandom[] random;

    /**
     * @param n        how many environments
     * @param maxSteps the time limit per episode (200: v0, 500: v1)
     * @param seed     environment {@code i} draws its starts from {@code seed + i}
     */
    public CartPole(final int n, final int maxSteps, final long seed)
    {
        if (n < 1 || maxSteps < 1)
        {
            throw new IllegalArgumentException("CartPole: expected n >= 1 and maxSteps >= 1, got n=" + n
                + " maxSteps=" + maxSteps);
        }
        this.n = n;
        this.maxSteps = maxSteps;
        this.state = new double[n * OBS];
        this.steps = new int[n];
        this.random = new ResumableRandom[n];
        seed(seed);
    }

    /** Re-seeds every environment and resets it. */
    public void seed(final long seed)
    {
        for (int i = 0; i < n; i++)
        {
            random[i] = new ResumableRandom(seed + i);
            reset(i);
        }
    }

    /** @return each environment's random state (its starts), for a checkpoint */
    public long[] randomStates()
    {
        final long[] states = new long[n];
        for (int i = 0; i < n; i++)
        {
            states[i] = random[i].state();
        }
        return states;
    }

    /**
     * Continues each environment's random stream from a checkpoint and starts a new episode in each (the episodes in
     * progress were not saved).
     *
     * @param states from {@link #randomStates()}
     * @throws IllegalArgumentException if the count differs from the number of environments
     */
    public void restoreRandomStates(final long[] states)
    {
        if (states.length != n)
        {
            throw new IllegalArgumentException("CartPole: " + states.length + " random states for " + n + " envs");
        }
        for (int i = 0; i < n; i++)
        {
            random[i].state(states[i]);
            reset(i);
        }
    }

    /** @return the number of environments */
    public int size()
    {
        return n;
    }

    /** Starts a new episode in environment {@code i}. */
    public void reset(final int i)
    {
        for (int k = 0; k < OBS; k++)
        {
            state[i * OBS + k] = random[i].nextDouble(-0.05, 0.05);
        }
        steps[i] = 0;
    }

    /**
     * Sets environment {@code i}'s state directly (for tests and hand-computed trajectories).
     *
     * @param i       the environment
     * @param x       cart position
     * @param xDot    cart velocity
     * @param theta   pole angle (radians)
     * @param thetaDot pole angular velocity
     */
    public void set(final int i, final double x, final double xDot, final double theta, final double thetaDot)
    {
        state[i * OBS] = x;
        state[i * OBS + 1] = xDot;
        state[i * OBS + 2] = theta;
        state[i * OBS + 3] = thetaDot;
        steps[i] = 0;
    }

    /**
     * Copies environment {@code i}'s observation into {@code out} at {@code offset}, as float32 (the net's input).
     */
    public void observe(final int i, final float[] out, final int offset)
    {
        for (int k = 0; k < OBS; k++)
        {
            out[offset + k] = (float)state[i * OBS + k];
        }
    }

    /** @return state component {@code k} of environment {@code i}, in double */
    public double state(final int i, final int k)
    {
        return state[i * OBS + k];
    }

    /** @return the steps taken in environment {@code i}'s current episode */
    public int episodeSteps(final int i)
    {
        return steps[i];
    }

    /**
     * One Euler step of environment {@code i}. The caller resets it after a terminal step.
     *
     * @param i      the environment
     * @param action 0 (left) or 1 (right)
     * @return whether the episode ended (failure or time limit)
     */
    public boolean step(final int i, final int action)
    {
        if (0 != action && 1 != action)
        {
            throw new IllegalArgumentException("action: expected 0 or 1, got " + action);
        }
        final int at = i * OBS;
        final double x = state[at];
        final double xDot = state[at + 1];
        final double theta = state[at + 2];
        final double thetaDot = state[at + 3];
        final double force = 1 == action ? FORCE : -FORCE;
        final double cos = Math.cos(theta);
        final double sin = Math.sin(theta);
        final double temp = (force + POLE_MASS_LENGTH * thetaDot * thetaDot * sin) / TOTAL_MASS;
        final double thetaAcc = (GRAVITY * sin - cos * temp)
            / (LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
        final double xAcc = temp - POLE_MASS_LENGTH * thetaAcc * cos / TOTAL_MASS;
        state[at] = x + TAU * xDot;
        state[at + 1] = xDot + TAU * xAcc;
        state[at + 2] = theta + TAU * thetaDot;
        state[at + 3] = thetaDot + TAU * thetaAcc;
        steps[i]++;
        return Math.abs(state[at]) > X_LIMIT || Math.abs(state[at + 2]) > THETA_LIMIT || steps[i] >= maxSteps;
    }
}
