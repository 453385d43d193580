package org.ding4j.example.pendulum;

import java.util.List;

import org.ding4j.example.ac.ContinuousActor;

/**
 * DI-engine's evaluator on Pendulum: {@code n_evaluator_episode} whole episodes with the deterministic action, run
 * side by side, the mean undiscounted return. As DI-engine's evaluator envs do, each evaluation starts its episodes
 * from fresh random states, drawn from the evaluator's own streams (seeded apart from the collector's and saved in
 * checkpoints): a fixed set of starts could hold a good policy just short of the stop value for ever.
 */
final class PendulumEvaluator
{
    private final Pendulum envs;
    private final int episodes;
    private final int maxSteps;
    private final float[] obs;
    private final float[] actions;
    private final double[] returns;

    PendulumEvaluator(final int episodes, final int maxSteps, final long seed)
    {
        this.episodes = episodes;
        this.maxSteps = maxSteps;
        envs = new Pendulum(episodes, maxSteps, seed);
        obs = new float[episodes * Pendulum.OBS];
        actions = new float[episodes * Pendulum.ACTION];
        returns = new double[episodes];
    }

    /** @return the mean return over the episodes */
    double evaluate(final ContinuousActor actor)
    {
        for (int i = 0; i < episodes; i++)
        {
            envs.reset(i);
            returns[i] = 0;
        }
        for (int t = 0; t < maxSteps; t++)
        {
            for (int i = 0; i < episodes; i++)
            {
                envs.observe(i, obs, i * Pendulum.OBS);
            }
            actor.act(obs, episodes, actions, null);
            for (int i = 0; i < episodes; i++)
            {
                returns[i] += envs.step(i, Pendulum.MAX_TORQUE * actions[i * Pendulum.ACTION]);
            }
        }
        return java.util.Arrays.stream(returns).sum() / episodes;
    }

    /** @return each episode's return in the last evaluation (a copy) */
    double[] returns()
    {
        return returns.clone();
    }

    /** @return the start streams' states */
    List<Long> randomState()
    {
        return java.util.Arrays.stream(envs.randomStates()).boxed().toList();
    }

    /** @param state states from {@link #randomState()} */
    void restoreRandomState(final Object state)
    {
        if (!(state instanceof List<?> list) || list.size() != episodes
            || !list.stream().allMatch(Long.class::isInstance))
        {
            throw new IllegalArgumentException("random state: expected eval, a list of " + episodes + " integers, got "
                + state);
        }
        envs.restoreRandomStates(list.stream().mapToLong(v -> (Long)v).toArray());
    }
}
