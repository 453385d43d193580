package org.ding4j.rl.pipeline;

import java.util.List;

import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.Box;
import org.ding4j.env.VectorEnv;
import org.ding4j.learner.StopSignals;

/**
 * DI-engine's evaluator for TD3, SAC and PPO: one whole episode per env with the deterministic action, run side by
 * side (a {@code Box} action scaled from [-1, 1] onto the space's bounds, a {@code Discrete} one passed as its index),
 * the mean undiscounted return. Each evaluation starts its episodes from fresh random states, drawn from the envs' own
 * streams (seeded apart from the collector's and saved in checkpoints), where DI-engine's evaluator (and DQN's
 * {@code Evaluator} here) replays the same seeded starts every time: a fixed set of starts could hold a good policy
 * just short of the stop value for ever. Not thread-safe.
 */
public final class EpisodeEvaluator implements AutoCloseable
{
    private final VectorEnv envs;
    private final ActionScale scale;
    private final int episodes;
    private final float[] actions;
    private final float[] envActions;
    private final double[] returns;
    private final boolean[] running;

    /**
     * @param envs one env per episode
     * @param seed the envs' seed ({@link VectorEnv#reset(long)})
     */
    public EpisodeEvaluator(final VectorEnv envs, final long seed)
    {
        this.envs = envs;
        this.scale = envs.actionSpace() instanceof Box box ? new ActionScale(box) : null;
        episodes = envs.size();
        actions = new float[episodes * envs.actionSpace().flatSize()];
        envActions = new float[actions.length];
        returns = new double[episodes];
        running = new boolean[episodes];
        // Each env plays one episode per evaluation, started by the next evaluation's reset: no start is drawn at
        // an episode's end that nobody would play.
        envs.autoReset(false);
        envs.reset(seed);
    }

    /** @return the mean return over the episodes */
    public double evaluate(final Actor actor)
    {
        envs.reset();
        EnvValues.requireFiniteReset(envs, "evaluation env");
        java.util.Arrays.fill(returns, 0);
        java.util.Arrays.fill(running, true);
        int left = episodes;
        // A stop the application asked for (StopSignals) ends an evaluation at once: its result is NaN, not recorded.
        while (left > 0 && !StopSignals.stopAsked())
        {
            actor.act(envs.observations(), episodes, actions, null);
            if (null != scale)
            {
                scale.apply(actions, envActions, episodes);
            }
            envs.step(null != scale ? envActions : actions);
            for (int i = 0; i < episodes; i++)
            {
                if (running[i])
                {
                    EnvValues.requireFiniteStep(envs, i, "evaluation env");
                    returns[i] += envs.rewards()[i];
                    if (envs.terminated()[i] || envs.truncated()[i])
                    {
                        running[i] = false;
                        left--;
                    }
                }
            }
        }
        return left > 0 ? Double.NaN : java.util.Arrays.stream(returns).sum() / episodes;
    }

    /** @return each episode's return in the last evaluation (a copy) */
    public double[] returns()
    {
        return returns.clone();
    }

    /** @return the start streams' states */
    public List<Long> randomState()
    {
        return java.util.Arrays.stream(envs.randomStates()).boxed().toList();
    }

    /** @param state a run's random state, whose {@code eval} holds the states of {@link #randomState()} */
    public void restoreRandomState(final java.util.Map<?, ?> state)
    {
        envs.restoreRandomStates(StateFields.integers("random state", state, "eval", episodes));
    }

    /** Closes the envs. */
    @Override
    public void close()
    {
        envs.close();
    }
}
