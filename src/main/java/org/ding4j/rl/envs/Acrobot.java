package org.ding4j.rl.envs;

import org.ding4j.env.Box;
import org.ding4j.env.Discrete;
import org.ding4j.env.SeededEnv;
import org.ding4j.env.Space;
import org.ding4j.env.StepResult;

/**
 * Gymnasium's {@code Acrobot-v1} as an {@link org.ding4j.env.Env}: two links (mass 1, length 1, centre of mass 0.5,
 * moment of inertia 1) hang from a fixed joint; the torque on the middle joint is -1, 0 or +1 ({@link Discrete}(3)).
 * One step is 0.2 s of the book's dynamics (Sutton and Barto) integrated by one fourth-order Runge-Kutta step, angles
 * wrapped to [-pi, pi], speeds bounded to 4 pi and 9 pi. The observation is {@code [cos th1, sin th1, cos th2, sin th2,
 * dth1, dth2]}; each step gives -1 until the free end rises a link's length above the fixed joint ({@code -cos th1 -
 * cos(th1 + th2) > 1}), which terminates the episode with 0. Starts are uniform in {@code [-0.1, 0.1]^4}; v1's 500-step
 * limit is a {@link org.ding4j.env.TimeLimit}. Allocates nothing per step.
 */
public final class Acrobot extends SeededEnv
{
    /** Observation width. */
    public static final int OBS = 6;
    /** Actions: torque -1, 0, +1. */
    public static final int ACTIONS = 3;
    /** Gymnasium's time limit for v1. */
    public static final int EPISODE_STEPS = 500;

    private static final double DT = 0.2;
    private static final double M1 = 1;
    private static final double M2 = 1;
    private static final double L1 = 1;
    private static final double LC1 = 0.5;
    private static final double LC2 = 0.5;
    private static final double I1 = 1;
    private static final double I2 = 1;
    private static final double G = 9.8;
    private static final double MAX_VEL_1 = 4 * Math.PI;
    private static final double MAX_VEL_2 = 9 * Math.PI;
    private static final Box OBSERVATION_SPACE = new Box(
        new float[] {-1, -1, -1, -1, (float)-MAX_VEL_1, (float)-MAX_VEL_2},
        new float[] {1, 1, 1, 1, (float)MAX_VEL_1, (float)MAX_VEL_2}, OBS);
    private static final Discrete ACTION_SPACE = new Discrete(ACTIONS);

    private final double[] s = new double[4];
    private final double[] y = new double[4];
    private final double[][] k = new double[4][4];

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
        for (int i = 0; i < 4; i++)
        {
            s[i] = random.nextDouble(-0.1, 0.1);
        }
        observe(obs);
    }

    /**
     * Sets the state directly (tests).
     *
     * @param th1  the first link's angle (0: hanging down)
     * @param th2  the second link's angle relative to the first
     * @param dth1 the first angle's speed
     * @param dth2 the second angle's speed
     */
    public void set(final double th1, final double th2, final double dth1, final double dth2)
    {
        s[0] = th1;
        s[1] = th2;
        s[2] = dth1;
        s[3] = dth2;
    }

    /** @return state component {@code i}: th1, th2, dth1, dth2 */
    public double state(final int i)
    {
        return s[i];
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        final double torque = ACTION_SPACE.index(action, 0) - 1;
        derivatives(s, torque, k[0]);
        for (int i = 0; i < 4; i++)
        {
            y[i] = s[i] + DT / 2 * k[0][i];
        }
        derivatives(y, torque, k[1]);
        for (int i = 0; i < 4; i++)
        {
            y[i] = s[i] + DT / 2 * k[1][i];
        }
        derivatives(y, torque, k[2]);
        for (int i = 0; i < 4; i++)
        {
            y[i] = s[i] + DT * k[2][i];
        }
        derivatives(y, torque, k[3]);
        for (int i = 0; i < 4; i++)
        {
            s[i] += DT / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
        }
        s[0] = wrap(s[0]);
        s[1] = wrap(s[1]);
        s[2] = Math.max(-MAX_VEL_1, Math.min(MAX_VEL_1, s[2]));
        s[3] = Math.max(-MAX_VEL_2, Math.min(MAX_VEL_2, s[3]));
        observe(obs);
        final boolean up = -Math.cos(s[0]) - Math.cos(s[1] + s[0]) > 1.0;
        result.set(up ? 0.0 : -1.0, up, false);
    }

    /** The book's equations of motion: {@code d/dt [th1, th2, dth1, dth2]} under {@code torque}. */
    private static void derivatives(final double[] x, final double torque, final double[] out)
    {
        final double th1 = x[0];
        final double th2 = x[1];
        final double dth1 = x[2];
        final double dth2 = x[3];
        final double d1 = M1 * LC1 * LC1 + M2 * (L1 * L1 + LC2 * LC2 + 2 * L1 * LC2 * Math.cos(th2)) + I1 + I2;
        final double d2 = M2 * (LC2 * LC2 + L1 * LC2 * Math.cos(th2)) + I2;
        final double phi2 = M2 * LC2 * G * Math.cos(th1 + th2 - Math.PI / 2);
        final double phi1 = -M2 * L1 * LC2 * dth2 * dth2 * Math.sin(th2)
            - 2 * M2 * L1 * LC2 * dth2 * dth1 * Math.sin(th2) + (M1 * LC1 + M2 * L1) * G * Math.cos(th1 - Math.PI / 2)
            + phi2;
        final double ddth2 = (torque + d2 / d1 * phi1 - M2 * L1 * LC2 * dth1 * dth1 * Math.sin(th2) - phi2)
            / (M2 * LC2 * LC2 + I2 - d2 * d2 / d1);
        out[0] = dth1;
        out[1] = dth2;
        out[2] = -(d2 * ddth2 + phi1) / d1;
        out[3] = ddth2;
    }

    /** Gymnasium's {@code wrap(x, -pi, pi)}. */
    static double wrap(final double x)
    {
        double v = x;
        while (v > Math.PI)
        {
            v -= 2 * Math.PI;
        }
        while (v < -Math.PI)
        {
            v += 2 * Math.PI;
        }
        return v;
    }

    private void observe(final float[] obs)
    {
        obs[0] = (float)Math.cos(s[0]);
        obs[1] = (float)Math.sin(s[0]);
        obs[2] = (float)Math.cos(s[1]);
        obs[3] = (float)Math.sin(s[1]);
        obs[4] = (float)s[2];
        obs[5] = (float)s[3];
    }

    @Override
    public String toString()
    {
        return "Acrobot";
    }
}
