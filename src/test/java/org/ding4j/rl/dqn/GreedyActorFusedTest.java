package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.env.VectorEnv;
import org.ding4j.rl.envs.CartPole;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.Threads;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fused greedy forward picks the actions libtorch's modules pick, step after step of real episodes: both act on
 * the same observations and the environments take libtorch's action; where the two picks differ, the two actions'
 * Q values must be a tie within float rounding (the fused GEMMs round differently from libtorch's, and differently
 * again on another CPU, so an exact near-tie may go either way), which never happens for a wrong forward.
 */
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
            GreedyActor eager = new GreedyActor(5, CartPole.OBS, CartPole.ACTIONS);
            GreedyActor fused = new GreedyActor(5, CartPole.OBS, CartPole.ACTIONS);
            VectorEnv envs = VectorEnv.sync(EnvTypes.factory("cartpole", 200), 5))
        {
            fused.fuse(net, params, hidden, dueling);
            envs.reset(3);
            final int[] a = new int[5];
            final int[] b = new int[5];
            final float[] actions = new float[5];
            int ties = 0;
            for (int step = 0; step < 300; step++)
            {
                eager.act(net, envs.observations(), a);
                fused.act(net, envs.observations(), b);
                for (int i = 0; i < 5; i++)
                {
                    if (a[i] != b[i])
                    {
                        final double[] q = qValues(net, java.util.Arrays.copyOfRange(envs.observations(),
                            i * CartPole.OBS, (i + 1) * CartPole.OBS));
                        final double gap = Math.abs(q[a[i]] - q[b[i]]);
                        assertTrue(gap <= 1e-5 * Math.max(1, Math.abs(q[a[i]])), "step " + step + " env " + i
                            + ": libtorch picks " + a[i] + ", fused " + b[i] + ", Q " + q[0] + " / " + q[1]);
                        ties++;
                    }
                    actions[i] = a[i];
                }
                envs.step(actions);
            }
            assertTrue(ties <= 3, ties + " near-ties in 1500 picks: more than rounding explains");
        }
    }

    private static double[] qValues(final QNetwork net, final float[] obs)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor q = net.forward(torch.from_blob(new FloatPointer(obs), new long[] {1, CartPole.OBS})
                .clone()).contiguous();
            final float[] values = new float[CartPole.ACTIONS];
            new FloatPointer(q.data_ptr()).get(values);
            return new double[] {values[0], values[1]};
        }
    }
}
