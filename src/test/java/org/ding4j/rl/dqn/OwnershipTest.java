package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.learner.BaseLearner;
import org.ding4j.rl.envs.CartPole;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every long-lived native object of the DQN example has one owner: a policy, a batch and an actor built inside a
 * caller's {@link PointerScope} keep working after that scope closes (without ownership the scope frees their
 * tensors and modules, and the next update reads freed memory).
 */
class OwnershipTest
{
    @TempDir
    Path dir;

    @Test
    void shouldTrainAndActAfterTheScopeTheyWereBuiltInCloses()
    {
        Threads.configure();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(CartPole.OBS, CartPole.ACTIONS,
            new long[] {32, 32}, true, 16, 1e-3, 10, 0.0, false, 0.0);
        final DqnPolicy policy;
        final DqnBatch batch;
        final GreedyActor actor;
        try (PointerScope scope = new PointerScope())
        {
            torch.manual_seed(0);
            policy = new DqnPolicy(settings);
            batch = new DqnBatch(settings.batchSize(), CartPole.OBS);
            actor = new GreedyActor(3, CartPole.OBS, CartPole.ACTIONS);
        }
        final ReplayBuffer buffer = new ReplayBuffer(64, CartPole.OBS, false, 0, 0, 2);
        final float[] obs = new float[CartPole.OBS];
        for (int i = 0; i < 64; i++)
        {
            obs[i % CartPole.OBS] = 0.01f * i;
            buffer.push(obs, 0, i % CartPole.ACTIONS, 1f, 0.97f, obs, 0);
        }
        try (policy; batch; actor;
            BaseLearner<DqnBatch> learner = new BaseLearner<>(Config.of(java.util.Map.of("log_policy", false)),
                policy, null, DistInfo.single(), dir.toString(), "learner"))
        {
            final int[] actions = new int[3];
            final float[] rows = new float[3 * CartPole.OBS];
            for (int i = 0; i < 50; i++)
            {
                assertTrue(buffer.sample(batch));
                learner.train(batch, i);
                actor.act(policy.online(), rows, actions);
                for (final int a : actions)
                {
                    assertTrue(0 == a || 1 == a, "a valid action: " + a);
                }
            }
            assertEquals(50, learner.trainIter());
            final double loss = learner.log().monitor().avg("total_loss");
            assertTrue(Double.isFinite(loss) && loss >= 0, "a finite loss after the scope closed: " + loss);
            assertEquals(List.of("cur_lr", "total_loss", "q_value", "target_q_value"), policy.monitorVars());
        }
    }
}
