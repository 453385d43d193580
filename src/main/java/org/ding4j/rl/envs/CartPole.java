package org.ding4j.rl.envs;

import org.ding4j.env.Box;
import org.ding4j.env.Discrete;
import org.ding4j.env.SeededEnv;
import org.ding4j.env.Space;
import org.ding4j.env.StepResult;

/**
 * The classic cart-pole task (Barto, Sutton and Anderson 1983, as Gymnasium's {@code CartPole-v1}) as an {@link
 * org.ding4j.env.Env}: gravity 9.8, cart mass 1.0, pole mass 0.1, half pole length 0.5, force 10, tau 0.02 with
 * explicit Euler steps, the state in double. An episode terminates when {@code |x| > 2.4} or {@code |theta| > 12
 * degrees}; every step, the final one included, gives reward 1; the time limit (200 as v0, 500 as v1) is a {@link
 * org.ding4j.env.TimeLimit} around it. Starts are uniform in {@code [-0.05, 0.05]^4}, drawn from the env's own seeded
 * generator, so a seed fixes every trajectory. Stepping allocates nothing. Not thread-safe.
 */
public final class CartPole extends SeededEnv
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
    private static final Box OBSERVATION_SPACE = new Box(
        new float[] {-4.8f, Float.NEGATIVE_INFINITY, -0.41887903f, Float.NEGATIVE_INFINITY},
        new float[] {4.8f, Float.POSITIVE_INFINITY, 0.41887903f, Float.POSITIVE_INFINITY}, OBS);
    private static final Discrete ACTION_SPACE = new Discrete(ACTIONS);

    private final double[] state = new double[OBS];

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
        for (int k = 0; k < OBS; k++)
        {
            state[k] = random.nextDouble(-0.05, 0.05);
        }
        observe(obs);
    }

    /**
     * Sets the state directly (for tests and hand-computed trajectories).
     *
     * @param x        cart position
     * @param xDot     cart velocity
     * @param theta    pole angle (radians)
     * @param thetaDot pole angular velocity
     */
    public void set(final double x, final double xDot, final double theta, final double thetaDot)
    {
        state[0] = x;
        state[1] = xDot;
        state[2] = theta;
        state[3] = thetaDot;
    }

    /** @return state component {@code k}, in double */
    public double state(final int k)
    {
        return state[k];
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        final int a = ACTION_SPACE.index(action, 0);
        final double x = state[0];
        final double xDot = state[1];
        final double theta = state[2];
        final double thetaDot = state[3];
        final double force = 1 == a ? FORCE : -FORCE;
        final double cos = Math.cos(theta);
        final double sin = Math.sin(theta);
        final double temp = (force + POLE_MASS_LENGTH * thetaDot * thetaDot * sin) / TOTAL_MASS;
        final double thetaAcc = (GRAVITY * sin - cos * temp)
            / (LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
        final double xAcc = temp - POLE_MASS_LENGTH * thetaAcc * cos / TOTAL_MASS;
        state[0] = x + TAU * xDot;
        state[1] = xDot + TAU * xAcc;
        state[2] = theta + TAU * thetaDot;
        state[3] = thetaDot + TAU * thetaAcc;
        observe(obs);
        result.set(1.0, Math.abs(state[0]) > X_LIMIT || Math.abs(state[2]) > THETA_LIMIT, false);
    }

    private void observe(final float[] obs)
    {
        for (int k = 0; k < OBS; k++)
        {
            obs[k] = (float)state[k];
        }
    }

    @Override
    public String toString()
    {
        return "CartPole";
    }
}
