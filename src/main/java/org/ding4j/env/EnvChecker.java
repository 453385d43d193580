package org.ding4j.env;

import java.util.Objects;

/**
 * Gymnasium's {@code check_env} for {@link Env}s: runs an env with random actions and checks what an algorithm relies
 * on. Each failure is an {@link IllegalStateException} naming the env, the call or step and the value:
 * <ul>
 * <li>both spaces are there, the observation space has at least one entry;</li>
 * <li>every observation (after reset and after each step) is finite and inside the observation space, every reward
 * is finite;</li>
 * <li>the same seed and the same actions give the same trajectory (observations, rewards, flags, and the starts of
 * the episodes after the first), bit for bit.</li>
 * </ul>
 */
public final class EnvChecker
{
    private EnvChecker()
    {
    }

    /**
     * @param env   the environment (reset and stepped here)
     * @param seed  the seed of both runs and of the random actions
     * @param steps steps per run, resetting after each episode's end
     * @throws IllegalStateException naming the env, the step and the value of the first rule broken
     */
    public static void check(final Env env, final long seed, final int steps)
    {
        Objects.requireNonNull(env, "env");
        if (steps < 1)
        {
            throw new IllegalArgumentException("steps: expected >= 1, got " + steps);
        }
        // Object's toString (the class and a hash code) names the class alone; an env's own toString is kept.
        final String name = env.toString().equals(env.getClass().getName() + "@" + Integer.toHexString(env.hashCode()))
            ? env.getClass().getName() : env.toString();
        final Box obsSpace = env.observationSpace();
        final Space actionSpace = env.actionSpace();
        if (null == obsSpace || null == actionSpace || obsSpace.flatSize() < 1)
        {
            throw new IllegalStateException(name + ": expected an observation space of at least one entry and an "
                + "action space, got " + obsSpace + " and " + actionSpace);
        }
        final int width = obsSpace.flatSize();
        final Trajectory first = new Trajectory(new float[width * (steps + 1)], new double[steps], new byte[steps],
            new float[width * steps]);
        run(env, seed, steps, first, null, name);
        run(env, seed, steps, new Trajectory(new float[first.obs().length], new double[steps], new byte[steps],
            new float[first.resets().length]), first, name);
    }

    /** A recorded run: its observations, rewards, flags, and the observation of each reset() after an episode. */
    private record Trajectory(float[] obs, double[] rewards, byte[] flags, float[] resets)
    {
    }

    private static void run(final Env env, final long seed, final int steps, final Trajectory log,
        final Trajectory reference, final String name)
    {
        final float[] obsLog = log.obs();
        final double[] rewards = log.rewards();
        final byte[] flags = log.flags();
        final Box obsSpace = env.observationSpace();
        final int width = obsSpace.flatSize();
        final ResumableRandom random = new ResumableRandom(seed);
        final float[] obs = new float[width];
        final float[] action = new float[env.actionSpace().flatSize()];
        final StepResult result = new StepResult();
        env.reset(seed, obs);
        checkObservation(obsSpace, obs, name + ": reset(seed=" + seed + ")");
        System.arraycopy(obs, 0, obsLog, 0, width);
        if (null != reference)
        {
            for (int k = 0; k < width; k++)
            {
                if (Float.floatToIntBits(reference.obs()[k]) != Float.floatToIntBits(obs[k]))
                {
                    throw new IllegalStateException(name + ": reset(seed=" + seed + ") twice gave observation[" + k
                        + "] " + reference.obs()[k] + ", then " + obs[k] + " (a reset must draw only from the "
                        + "generator its seed seeds)");
                }
            }
        }
        for (int t = 0; t < steps; t++)
        {
            env.actionSpace().sample(random, action, 0);
            env.step(action, obs, result);
            final String at = name + ": step " + t + " after reset(seed=" + seed + ")";
            checkObservation(obsSpace, obs, at);
            if (!Double.isFinite(result.reward()))
            {
                throw new IllegalStateException(at + ": reward " + result.reward() + " is not finite");
            }
            System.arraycopy(obs, 0, obsLog, (t + 1) * width, width);
            rewards[t] = result.reward();
            flags[t] = (byte)((result.terminated() ? 1 : 0) | (result.truncated() ? 2 : 0));
            if (null != reference)
            {
                compare(reference, obsLog, rewards, flags, t, width, at);
            }
            if (result.done())
            {
                env.reset(obs);
                checkObservation(obsSpace, obs, at + ", reset()");
                System.arraycopy(obs, 0, log.resets(), t * width, width);
                for (int k = 0; null != reference && k < width; k++)
                {
                    if (Float.floatToIntBits(reference.resets()[t * width + k]) != Float.floatToIntBits(obs[k]))
                    {
                        // A later episode's start must come from the generator the first reset seeded too.
                        throw new IllegalStateException(at + ", reset(), run again with the same seed and actions: "
                            + "observation[" + k + "] " + obs[k] + ", first run " + reference.resets()[t * width + k]
                            + " (an env must draw only from the generator its reset seeds)");
                    }
                }
            }
        }
    }

    private static void compare(final Trajectory reference, final float[] obsLog, final double[] rewards,
        final byte[] flags, final int t, final int width, final String at)
    {
        final String again = at + ", run again with the same seed and actions: ";
        for (int k = 0; k < width; k++)
        {
            final int i = (t + 1) * width + k;
            if (Float.floatToIntBits(reference.obs()[i]) != Float.floatToIntBits(obsLog[i]))
            {
                throw new IllegalStateException(again + "observation[" + k + "] " + obsLog[i] + ", first run "
                    + reference.obs()[i] + " (an env must draw only from the generator its reset seeds)");
            }
        }
        if (Double.doubleToLongBits(reference.rewards()[t]) != Double.doubleToLongBits(rewards[t])
            || reference.flags()[t] != flags[t])
        {
            throw new IllegalStateException(again + "reward " + rewards[t] + " flags " + flags[t] + ", first run "
                + reference.rewards()[t] + " flags " + reference.flags()[t]);
        }
    }

    private static void checkObservation(final Box space, final float[] obs, final String at)
    {
        for (int k = 0; k < obs.length; k++)
        {
            if (!Float.isFinite(obs[k]))
            {
                throw new IllegalStateException(at + ": observation[" + k + "] = " + obs[k] + " is not finite");
            }
            if (obs[k] < space.low(k) || obs[k] > space.high(k))
            {
                throw new IllegalStateException(at + ": observation[" + k + "] = " + obs[k] + " is outside the "
                    + "observation space's [" + space.low(k) + ", " + space.high(k) + "]");
            }
        }
    }
}
