package org.ding4j.example.pendulum;

import org.ding4j.example.dqn.ResumableRandom;

/**
 * Gym's {@code Pendulum-v1}, vectorised over {@code n} independent environments in flat primitive arrays: gravity
 * 10, mass 1, length 1, dt 0.05, angular speed clipped to [-8, 8], torque to [-2, 2]; reward
 * {@code -(angle_normalize(th)^2 + 0.1 thdot^2 + 0.001 u^2)} with the clipped torque, Python's floor modulo in
 * {@code angle_normalize}; observation {@code [cos th, sin th, thdot]}; starts uniform in {@code th in [-pi, pi]},
 * {@code thdot in [-1, 1]}. An episode is cut after {@code maxSteps} steps (200 as v1): that is a truncation, never a
 * termination, so a learner still bootstraps from the next state. The arithmetic is gym's in double, step for step
 * ({@code PendulumTest} checks a table written by that formula). Stepping allocates nothing. Not thread-safe.
 */
public final class Pendulum
{
    /** Observation width: cos th, sin th, thdot. */
    public static final int OBS = 3;
    /** Action width: the torque. */
    public static final int ACTION = 1;
    /** The torque limit; actions are clipped to [-MAX_TORQUE, MAX_TORQUE]. */
    public static final double MAX_TORQUE = 2.0;
    /** Gym's time limit for v1. */
    public static final int EPISODE_STEPS = 200;

    private static final double G = 10.0;
    private static final double M = 1.0;
    private static final double L = 1.0;
    private static final double DT = 0.05;
    private static final double MAX_SPEED = 8.0;

    private final int n;
    private final int maxSteps;
    private final double[] theta;
    private final double[] thetaDot;
    private final int[] steps;
    private final ResumableRandom[] random;

    /**
     * @param n        how many environments
     * @param maxSteps the time limit per episode (200: v1)
     * @param seed     environment {@code i} draws its starts from {@code seed + i}
     */
    public Pendulum(final int n, final int maxSteps, final long seed)
    {
        if (n < 1 || maxSteps < 1)
        {
            throw new IllegalArgumentException("Pendulum: expected n >= 1 and maxSteps >= 1, got n=" + n
                + " maxSteps=" + maxSteps);
        }
        this.n = n;
        this.maxSteps = maxSteps;
        this.theta = new double[n];
        this.thetaDot = new double[n];
        this.steps = new int[n];
        this.random = new ResumableRandom[n];
        for (int i = 0; i < n; i++)
        {
            random[i] = new ResumableRandom(seed + i);
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
        theta[i] = random[i].nextDouble(-Math.PI, Math.PI);
        thetaDot[i] = random[i].nextDouble(-1.0, 1.0);
        steps[i] = 0;
    }

    /** @return the start-state stream of each env (its state, to save) */
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
     * @param states states from {@link #randomStates()}: each env's next reset continues its stream
     * @throws IllegalArgumentException if the count is not this vector's
     */
    public void restoreRandomStates(final long[] states)
    {
        if (states.length != n)
        {
            throw new IllegalArgumentException("Pendulum: expected " + n + " random states, got " + states.length);
        }
        for (int i = 0; i < n; i++)
        {
            random[i].state(states[i]);
        }
    }

    /**
     * Sets environment {@code i}'s state directly (tests, hand-computed trajectories).
     *
     * @param i        the environment
     * @param th       the angle (radians, 0 upright; any value, it is not wrapped)
     * @param thDot    the angular speed
     */
    public void set(final int i, final double th, final double thDot)
    {
        theta[i] = th;
        thetaDot[i] = thDot;
        steps[i] = 0;
    }

    /** @return environment {@code i}'s angle */
    public double theta(final int i)
    {
        return theta[i];
    }

    /** @return environment {@code i}'s angular speed */
    public double thetaDot(final int i)
    {
        return thetaDot[i];
    }

    /** Copies environment {@code i}'s observation into {@code out} at {@code offset}, as float32 (the net's input). */
    public void observe(final int i, final float[] out, final int offset)
    {
        out[offset] = (float)Math.cos(theta[i]);
        out[offset + 1] = (float)Math.sin(theta[i]);
        out[offset + 2] = (float)thetaDot[i];
    }

    /**
     * One step of environment {@code i}.
     *
     * @param i      the environment
     * @param torque the action, clipped to [-2, 2]
     * @return the reward
     * @throws IllegalArgumentException for a torque that is NaN or infinite
     */
    public double step(final int i, final double torque)
    {
        if (!Double.isFinite(torque))
        {
            throw new IllegalArgumentException("action: expected a finite torque, got " + torque);
        }
        final double u = Math.max(-MAX_TORQUE, Math.min(MAX_TORQUE, torque));
        final double th = theta[i];
        final double thDot = thetaDot[i];
        final double normalized = angleNormalize(th);
        final double costs = normalized * normalized + 0.1 * thDot * thDot + 0.001 * (u * u);
        final double newThDot = Math.max(-MAX_SPEED, Math.min(MAX_SPEED,
            thDot + (3 * G / (2 * L) * Math.sin(th) + 3.0 / (M * L * L) * u) * DT));
        theta[i] = th + newThDot * DT;
        thetaDot[i] = newThDot;
        steps[i]++;
        return -costs;
    }

    /** @return whether environment {@code i}'s episode reached the time limit (a truncation; reset it then) */
    public boolean truncated(final int i)
    {
        return steps[i] >= maxSteps;
    }

    /** Gym's {@code ((x + pi) % (2 pi)) - pi} with Python's modulo (the sign of the divisor), not Java's. */
    static double angleNormalize(final double x)
    {
        final double period = 2 * Math.PI;
        double mod = (x + Math.PI) % period;
        if (0 != mod && mod < 0)
        {
            mod += period;
        }
        return mod - Math.PI;
    }
}
