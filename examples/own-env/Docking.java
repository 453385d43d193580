import org.ding4j.env.Box;
import org.ding4j.env.Discrete;
import org.ding4j.env.SeededEnv;
import org.ding4j.env.Space;
import org.ding4j.env.StepResult;

/**
 * A user's own environment, written against ding4j's Env API only: dock a craft on a rail at x = 0. The observation
 * is [x, v]; the action is a thrust in [-1, 1] (this class, for TD3 and SAC) or one of three thrusters, back / none
 * / ahead ({@link Thrusters}, for DQN). Each step costs 0.1 |x| plus a little fuel; docking (|x| < 0.2 at |v| < 0.2)
 * ends the episode with +10, leaving the rail (|x| = 10) with -10. The time limit comes from the config.
 */
public class Docking extends SeededEnv
{
    private static final Box OBSERVATIONS = new Box(new float[] {-10, -2}, new float[] {10, 2}, 2);
    private static final Box THRUST = Box.of(-1, 1, 1);

    private double x;
    private double v;

    @Override
    public Box observationSpace()
    {
        return OBSERVATIONS;
    }

    @Override
    public Space actionSpace()
    {
        return THRUST;
    }

    /** @return the thrust an action asks for, in [-1, 1] */
    protected double thrust(final float[] action)
    {
        return Math.max(-1, Math.min(1, action[0]));
    }

    @Override
    public void reset(final float[] obs)
    {
        x = random.nextDouble(-5, 5);
        v = 0;
        obs[0] = (float)x;
        obs[1] = (float)v;
    }

    @Override
    public void step(final float[] action, final float[] obs, final StepResult result)
    {
        final double u = thrust(action);
        v = Math.max(-2, Math.min(2, v + 0.1 * u));
        x = Math.max(-10, Math.min(10, x + 0.1 * v));
        final boolean docked = Math.abs(x) < 0.2 && Math.abs(v) < 0.2;
        final boolean lost = Math.abs(x) >= 10;
        obs[0] = (float)x;
        obs[1] = (float)v;
        result.set(-0.1 * Math.abs(x) - 0.01 * u * u + (docked ? 10 : 0) - (lost ? 10 : 0), docked || lost, false);
    }

    /** The same craft with three thrusters (back, none, ahead): a Discrete action space, for DQN. */
    public static final class Thrusters extends Docking
    {
        private static final Discrete THRUSTERS = new Discrete(3);

        @Override
        public Space actionSpace()
        {
            return THRUSTERS;
        }

        @Override
        protected double thrust(final float[] action)
        {
            return THRUSTERS.index(action, 0) - 1;
        }
    }
}
