package org.ding4j.example.pendulum;

import org.ding4j.example.ac.ContinuousActor;

/**
 * DI-engine's evaluator on Pendulum: {@code n_evaluator_episode} whole episodes with the deterministic action,
 * the mean undiscounted return. Every evaluation replays the same starting states (drawn once from its seed), so
 * that two evaluations differ only by the policy.
 */
final class PendulumEvaluator
{
    private final int episodes;
    private final int maxSteps;
    private final double[] startTheta;
    private final double[] startThetaDot;

    PendulumEvaluator(final int episodes, final int maxSteps, final long seed)
    {
        this.episodes = episodes;
        this.maxSteps = maxSteps;
        final Pendulum starts = new Pendulum(episodes, maxSteps, seed);
        startTheta = new double[episodes];
        startThetaDot = new double[episodes];
        for (int i = 0; i < episodes; i++)
        {
            startTheta[i] = starts.theta(i);
            startThetaDot[i] = starts.thetaDot(i);
        }
    }

    /** @return the mean return over the episodes, all run side by side */
    double evaluate(final ContinuousActor actor)
    {
        final Pendulum envs = new Pendulum(episodes, maxSteps, 0);
        final float[] obs = new float[episodes * Pendulum.OBS];
        final float[] actions = new float[episodes * Pendulum.ACTION];
        double total = 0;
        for (int i = 0; i < episodes; i++)
        {
            envs.set(i, startTheta[i], startThetaDot[i]);
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
                total += envs.step(i, Pendulum.MAX_TORQUE * actions[i * Pendulum.ACTION]);
            }
        }
        return total / episodes;
    }
}
