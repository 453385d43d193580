package org.ding4j.rl.dqn;

import java.util.SplittableRandom;

import org.ding4j.config.Config;
import org.ding4j.learner.StopSignals;
import org.ding4j.policy.LogSink;

/**
 * Runs updates and greedy forwards on throwaway nets and random data, so that the JIT and libtorch's first-call
 * paths are warm before the clock starts; the run's own nets, buffer and generators are untouched.
 */
final class WarmUp
{
    private WarmUp()
    {
    }

    static void run(final Config cfg, final int updates)
    {
        if (0 == updates)
        {
            return;
        }
        final DqnPolicy.Settings settings = DqnAlgorithm.policySettings(cfg);
        final SplittableRandom random = new SplittableRandom(-1);
        final int width = settings.obs();
        final ReplayBuffer buffer = new ReplayBuffer(2 * settings.batchSize(), width, false, 0, 0, -1);
        final float[] obs = new float[width];
        for (int i = 0; i < 2 * settings.batchSize(); i++)
        {
            for (int k = 0; k < obs.length; k++)
            {
                obs[k] = (float)random.nextDouble(-0.1, 0.1);
            }
            buffer.push(obs, 0, random.nextInt(settings.actions()), 1f, 0.97f, obs, 0);
        }
        final int collectRows = cfg.getInt("env.collector_env_num");
        final int evalRows = cfg.getInt("env.evaluator_env_num");
        final float[] collectObs = new float[collectRows * width];
        final float[] evalObs = new float[evalRows * width];
        final LogSink sink = LogSink.discard();
        try (DqnPolicy policy = new DqnPolicy(settings);
            DqnBatch batch = new DqnBatch(settings.batchSize(), width);
            GreedyActor collect = new GreedyActor(collectRows, width, settings.actions());
            GreedyActor evaluate = new GreedyActor(evalRows, width, settings.actions()))
        {
            policy.registerLogVars(sink);
            // Warm the path the run takes.
            policy.fusedUpdate(cfg.getBoolean("policy.learn.fused_update"));
            if (policy.fusedUpdate())
            {
                collect.fuse(policy.online(), policy.parameters(), settings.hidden(), settings.dueling());
                evaluate.fuse(policy.online(), policy.parameters(), settings.hidden(), settings.dueling());
            }
            final int[] collectActions = new int[collectRows];
            final int[] evalActions = new int[evalRows];
            for (int i = 0; i < updates && !StopSignals.stopAsked(); i++)
            {
                buffer.sample(batch);
                policy.forward(batch, sink);
                collect.act(policy.online(), collectObs, collectActions);
                evaluate.act(policy.online(), evalObs, evalActions);
            }
        }
    }
}
