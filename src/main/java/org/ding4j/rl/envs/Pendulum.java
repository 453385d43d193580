package org.ding4j.rl.envs;

import org.ding4j.env.Box;
import org.ding4j.env.SeededEnv;
import org.ding4j.env.Space;
import org.ding4j.env.StepResult;

/**
 * Gymnasium's {@code Pendulum-v1} as an {@link org.ding4j.env.Env}: gravity 10, mass 1, length 1, dt 0.05, angular
 * speed clipped to [-8, 8], torque to [-2, 2]; reward {@code -(angle_normalize(th)^2 + 0.1 thdot^2 + 0.001 u^2)} with
 * the clipped torque, Python's floor modulo in {@code angle_normalize}; observation {@code [cos th, sin th, thdot]};
 * starts uniform in {@code th in [-pi, pi]}, {@code thdot in [-1, 1]}. It never terminates: the 200-step limit of v1 is
 * a {@link org.ding4j.env.TimeLimit} around it, a truncation, so a learner still bootstraps from the next state. The
 * arithmetic is gym's in double, step for step ({@code PendulumTest} checks a table written by that formula). Stepping
 * allocates nothing. Not thread-safe.
 */
public final class Pendulum extends SeededEnv
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
    private static final Box OBSERVATION_SPACE = new Box(new float[] {-1, -1, (float)-MAX_SPEED},
        new float[] {1, 1, (float)MAX_SPEED}, OBS);
    private static final Box ACTION_SPACE = Box.of(-MAX_TORQUE, MAX_TORQUE, ACTION);

    private double theta;
    private double thetaDot;

    @Override
    public Box observationSpace()
    {
        return OBSERVATION_SPACE;
    }

    @Override
    public Space actionSpace()
    {
        return ACTION_SPACE;
    }

    @Override
    public void reset(final float[] obs)
    {
        theta = random.nextDouble(-Math.PI, Math.PI);
        thetaDot = random.nextDouble(-1.0, 1.0);
        observe(obs);
    }

    /**
     * Sets the state directly (tests, hand-computed trajectories).
     *
     * @param th    the angle (radians, 0 upright; any value, it is not wrapped)
     * @param thDot the angular speed
     */
    public void set(final double th, final double thDot)
    {
        theta = th;
        thetaDot = thDot;
    }

    /** @return the angle */
    public double theta()
    {
        return theta;
    }

    /** @return the angular speed */
    public double thetaDot()
    {
        return thetaDot;
    }

    /**
     * One step with the torque {@code action[0]}, clipped to [-2, 2].
     *
     * @throws IllegalArgumentException for a torque that is NaN or infinite
     */
    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        result.set(step(action[0]), false, false);
        observe(obs);
    }

    /**
     * One step.
     *
     * @param torque the torque, clipped to [-2, 2]
     * @return the reward
     * @throws IllegalArgumentException for a torque that is NaN or infinite
     */
    public double step(final double torque)
    {
        if (!Double.isFinite(torque))
        {
            throw new IllegalArgumentException("action: expected a finite torque, got " + torque);
        }
        final double u = Math.max(-MAX_TORQUE, Math.min(MAX_TORQUE, torque));
        final double th = theta;
        final double thDot = thetaDot;
        final double normalized = angleNormalize(th);
        final double costs = normalized * normalized + 0.1 * thDot * thDot + 0.001 * (u * u);
        final double newThDot = Math.max(-MAX_SPEED, Math.min(MAX_SPEED,
            thDot + (3 * G / (2 * L) * Math.sin(th) + 3.0 / (M * L * L) * u) * DT));
        theta = th + newThDot * DT;
        thetaDot = newThDot;
        return -costs;
    }

    /** Writes the observation, as float32 (the net's input). */
    private void observe(final float[] obs)
    {
        obs[0] = (float)Math.cos(theta);
        obs[1] = (float)Math.sin(theta);
        obs[2] = (float)thetaDot;
    }

    @Override
    public String toString()
    {
        return "Pendulum";
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
