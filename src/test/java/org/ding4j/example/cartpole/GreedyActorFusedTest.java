package org.ding4j.example.cartpole;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.example.dqn.QNetwork;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.Threads;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The fused greedy forward picks the actions libtorch's modules pick, step after step of real episodes. */
class GreedyActorFusedTest
{
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void fusedActionsShouldEqualLibtorchs(final boolean dueling)
    {
        Threads.configure();
        torch.manual_seed(5);
        final long[] hidden = {32, 16};
        try (QNetwork net = new QNetwork(CartPole.OBS, CartPole.ACTIONS, hidden, dueling);
            FlatParameters params = FlatParameters.of(net.module());
            GreedyActor eager = new GreedyActor(new CartPole(5, 200, 3));
            GreedyActor fused = new GreedyActor(new CartPole(5, 200, 3)))
        {
            fused.fuse(net, params, hidden, dueling);
            final CartPole eagerEnvs = eager.envs();
            final CartPole fusedEnvs = fused.envs();
            final int[] a = new int[5];
            final int[] b = new int[5];
            for (int step = 0; step < 300; step++)
            {
                eager.act(net, a);
                fused.act(net, b);
                assertArrayEquals(a, b, "step " + step);
                for (int i = 0; i < 5; i++)
                {
                    if (eagerEnvs.step(i, a[i]))
                    {
                        eagerEnvs.reset(i);
                    }
                    if (fusedEnvs.step(i, b[i]))
                    {
                        fusedEnvs.reset(i);
                    }
                }
            }
        }
    }
}
