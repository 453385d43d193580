package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The DQN learn step's target math on a tiny batch, recomputed by hand in Java from the nets' own Q-values: the
 * double-DQN target takes the online net's argmax at the next state and the target net's value there, bootstraps
 * with {@code gamma^n} (0 after a terminal step), and the loss is the importance-weighted mean squared TD error.
 */
@Tag("native")
class DqnPolicyTest
{
    private static final int BATCH = 4;
    private static final int OBS = 3;
    private static final int ACTIONS = 3;

    static
    {
        Threads.configure();
    }

    @Test
    void anUpdateWhoseLossIsNotFiniteFailsNamingIt()
    {
        for (final boolean fused : new boolean[] {true, false})
        {
            final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, new long[] {8}, false, BATCH,
                1e-3, 100, 0.0, false, 0.0);
            try (DqnPolicy policy = new DqnPolicy(settings); DqnBatch batch = new DqnBatch(BATCH, OBS))
            {
                policy.fusedUpdate(fused);
                java.util.Arrays.fill(batch.weight, 1f);
                // A reward of infinity, as an env or a corrupt replay could hand over: every weight it touches is gone.
                batch.nstepReturn[0] = Float.POSITIVE_INFINITY;
                batch.upload();
                final org.ding4j.policy.DivergedException ex = org.junit.jupiter.api.Assertions.assertThrows(
                    org.ding4j.policy.DivergedException.class, () -> policy.forward(batch, LogSink.discard()));
                assertTrue(ex.getMessage().startsWith("DQN diverged: total_loss is "), ex.getMessage());
            }
        }
    }

    @Test
    void learnStepShouldComputeTheDoubleDqnTargetAndLossByHand()
    {
        torch.manual_seed(7);
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, new long[] {8, 8}, true, BATCH,
            1e-3, 100, 0.0, false, 0.0);
        try (DqnPolicy policy = new DqnPolicy(settings); DqnBatch batch = new DqnBatch(BATCH, OBS))
        {
            // A target net apart from the online one, so double DQN and plain DQN would pick different values.
            try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
            {
                final Tensor values = policy.targetParameters().group(0).values();
                values.add_(torch.randn(values.numel()).mul(new org.bytedeco.pytorch.Scalar(0.5)));
            }
            final java.util.SplittableRandom random = new java.util.SplittableRandom(3);
            for (int i = 0; i < BATCH * OBS; i++)
            {
                batch.obs[i] = (float)random.nextDouble(-1, 1);
                batch.nextObs[i] = (float)random.nextDouble(-1, 1);
            }
            final long[] actions = {0, 2, 1, 2};
            final float[] returns = {1f, 0.5f, 1f, -1f};
            final float[] bootstrap = {0.97f, 0f, 0.9409f, 0.97f};
            final float[] weights = {1f, 0.5f, 0.25f, 2f};
            System.arraycopy(actions, 0, batch.action, 0, BATCH);
            System.arraycopy(returns, 0, batch.nstepReturn, 0, BATCH);
            System.arraycopy(bootstrap, 0, batch.bootstrap, 0, BATCH);
            System.arraycopy(weights, 0, batch.weight, 0, BATCH);
            batch.upload();

            final float[] q = qValues(policy.online(), batch.obsTensor());
            final float[] onlineNext = qValues(policy.online(), batch.nextObsTensor());
            final float[] targetNext;
            // The target net is not exposed; a net holding its flat values is the same function.
            try (QNetwork copy = new QNetwork(OBS, ACTIONS, new long[] {8, 8}, true);
                org.ding4j.torch.FlatParameters flat = org.ding4j.torch.FlatParameters.of(copy.module()))
            {
                try (NoGradGuard noGrad = new NoGradGuard())
                {
                    flat.group(0).values().copy_(policy.targetParameters().group(0).values());
                }
                targetNext = qValues(copy, batch.nextObsTensor());
            }

            final double[] td = new double[BATCH];
            double loss = 0;
            double targetSum = 0;
            boolean doubleDiffers = false;
            for (int i = 0; i < BATCH; i++)
            {
                final int online = argmax(onlineNext, i);
                doubleDiffers |= online != argmax(targetNext, i);
                final double y = returns[i] + bootstrap[i] * targetNext[i * ACTIONS + online];
                td[i] = q[i * ACTIONS + (int)actions[i]] - y;
                loss += weights[i] * td[i] * td[i];
                for (int a = 0; a < ACTIONS; a++)
                {
                    targetSum += targetNext[i * ACTIONS + a];
                }
            }
            loss /= BATCH;
            double qSum = 0;
            for (final float v : q)
            {
                qSum += v;
            }
            assertTrue(doubleDiffers, "the batch must tell double DQN from plain DQN");

            final Recorder sink = new Recorder();
            policy.registerLogVars(sink);
            policy.forward(batch, sink);

            assertEquals(loss, sink.values.get("total_loss"), 1e-5 * Math.max(1, loss));
            assertEquals(qSum / q.length, sink.values.get("q_value"), 1e-5);
            assertEquals(targetSum / targetNext.length, sink.values.get("target_q_value"), 1e-5);
            assertEquals(1e-3, sink.values.get("cur_lr"), 1e-12);
            for (int i = 0; i < BATCH; i++)
            {
                assertEquals(Math.abs(td[i]), sink.priorities[i], 1e-5, "priority of sample " + i);
            }
        }
    }

    /**
     * A run saved to a real checkpoint file at update 137 (a multiple of no schedule: the target syncs every 100) and
     * loaded into a policy built from another seed continues exactly as the straight run: the hard sync comes at 200
     * and 300, not 237, because the update count travels in the state dict.
     */
    @ParameterizedTest(name = "fused {0}")
    @ValueSource(booleans = {true, false})
    void aResumeAtUpdate137ShouldEndBitIdenticalToTheStraightRun(final boolean fused, @TempDir final Path dir)
        throws Exception
    {
        Threads.configure();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, new long[] {16, 16}, true, BATCH,
            1e-3, 100, 0.0, false, 0.0);
        torch.manual_seed(1);
        final DqnPolicy straight = new DqnPolicy(settings);
        torch.manual_seed(1);
        final DqnPolicy first = new DqnPolicy(settings);
        torch.manual_seed(99);
        final DqnPolicy resumed = new DqnPolicy(settings);
        try (straight; first; resumed; DqnBatch batch = new DqnBatch(BATCH, OBS))
        {
            straight.fusedUpdate(fused);
            first.fusedUpdate(fused);
            resumed.fusedUpdate(fused);
            final java.util.SplittableRandom a = new java.util.SplittableRandom(5);
            final java.util.SplittableRandom b = new java.util.SplittableRandom(5);
            for (int u = 0; u < 137; u++)
            {
                DqnPolicyFusedTest.fill(batch, a);
                straight.forward(batch, LogSink.discard());
                DqnPolicyFusedTest.fill(batch, b);
                first.forward(batch, LogSink.discard());
            }
            final Path file = dir.resolve("iteration_137.pth.tar");
            try (PointerScope scope = new PointerScope())
            {
                new TorchCheckpointIO().write(file, first.stateDict());
                resumed.loadStateDict(new TorchCheckpointIO().read(file));
            }
            assertEquals(137L, resumed.updates());
            for (int u = 137; u < 300; u++)
            {
                DqnPolicyFusedTest.fill(batch, a);
                straight.forward(batch, LogSink.discard());
                DqnPolicyFusedTest.fill(batch, b);
                resumed.forward(batch, LogSink.discard());
            }
            assertTrue(straight.parameters().group(0).values().equal(resumed.parameters().group(0).values()),
                "online net bit-identical");
            assertTrue(straight.targetParameters().group(0).values().equal(
                resumed.targetParameters().group(0).values()), "target net bit-identical (synced at 200, 300)");
        }
    }

    @Test
    void theBuilderShouldNameEverySettingWithDiEnginesDefaultsAndThePolicyFuseByDefault()
    {
        Threads.configure();
        final DqnPolicy.Settings built = DqnPolicy.Settings.builder(4, 2).build();
        final DqnPolicy.Settings positional = new DqnPolicy.Settings(4, 2, new long[] {128, 128, 64}, true, 64, 1e-3,
            100, 0.0, false, 0.0);
        assertEquals(java.util.List.of(positional.obs(), positional.actions(), positional.dueling(),
            positional.batchSize(), positional.lr(), positional.targetUpdateFreq(), positional.targetTheta(),
            positional.huber(), positional.gradClip(), positional.activation()), java.util.List.of(built.obs(),
            built.actions(), built.dueling(), built.batchSize(), built.lr(), built.targetUpdateFreq(),
            built.targetTheta(), built.huber(), built.gradClip(), built.activation()));
        assertTrue(java.util.Arrays.equals(positional.hidden(), built.hidden()));
        final DqnPolicy.Settings custom = DqnPolicy.Settings.builder(6, 3).hidden(32).targetUpdateFreq(7)
            .targetTheta(0.01).learningRate(5e-4).build();
        assertEquals(7, custom.targetUpdateFreq());
        assertEquals(0.01, custom.targetTheta(), 0.0);
        final IllegalArgumentException bad = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> DqnPolicy.Settings.builder(4, 2).targetTheta(2).build());
        assertTrue(bad.getMessage().contains("target_theta=2.0"), bad.getMessage());
        try (DqnPolicy policy = new DqnPolicy(custom))
        {
            assertTrue(policy.fusedUpdate(), "the fused native update is the default");
        }
    }

    @Test
    void aStateWithoutOptimizerShouldBeRefusedUnlessAFreshAdamIsAsked()
    {
        Threads.configure();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, new long[] {8}, false, BATCH,
            1e-3, 10, 0.0, false, 0.0);
        try (DqnPolicy saved = new DqnPolicy(settings); DqnPolicy resumed = new DqnPolicy(settings))
        {
            final Map<String, Object> state = new java.util.LinkedHashMap<>(saved.stateDict());
            state.remove("optimizer");
            final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> resumed.loadStateDict(state));
            assertTrue(ex.getMessage().contains("'optimizer' is missing"), ex.getMessage());
            assertTrue(ex.getMessage().contains("policy.learn.fresh_optimizer_on_resume"), ex.getMessage());
            resumed.allowFreshOptimizer(true);
            resumed.loadStateDict(state);
            // Another algorithm's checkpoint (a SAC one: actor and critic, no 'optimizer') is refused for its net
            // first: the advice about the optimizer would lead nowhere.
            resumed.allowFreshOptimizer(false);
            final Map<String, Object> other = new java.util.LinkedHashMap<>();
            other.put("model", Map.of("actor.0.weight", torch.zeros(8, OBS)));
            other.put("actor_optimizer", Map.of());
            final IllegalArgumentException cross = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> resumed.loadStateDict(other));
            assertTrue(cross.getMessage().startsWith("DQN state dict: its 'model' is another net's (missing keys ["
                + "encoder.main.0.weight, ") && cross.getMessage().contains("unexpected keys [actor.0.weight]"),
                cross.getMessage());
        }
    }

    private static float[] qValues(final QNetwork net, final Tensor obs)
    {
        final float[] out = new float[BATCH * ACTIONS];
        try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
        {
            final Tensor q = net.forward(obs).contiguous();
            new FloatPointer(q.data_ptr()).get(out);
        }
        return out;
    }

    private static int argmax(final float[] q, final int row)
    {
        int best = 0;
        for (int a = 1; a < ACTIONS; a++)
        {
            if (q[row * ACTIONS + a] > q[row * ACTIONS + best])
            {
                best = a;
            }
        }
        return best;
    }

    /** Keeps what the policy reports. */
    private static final class Recorder implements LogSink
    {
        final Map<String, Double> values = new HashMap<>();
        final Map<Integer, String> keys = new HashMap<>();
        double[] priorities;

        @Override
        public int register(final String key)
        {
            keys.put(keys.size(), key);
            return keys.size() - 1;
        }

        @Override
        public void put(final int index, final double value)
        {
            values.put(keys.get(index), value);
        }

        @Override
        public void value(final String key, final Object value)
        {
            throw new AssertionError("the DQN policy writes by index only, got " + key);
        }

        @Override
        public void priority(final double[] p, final int count, final int[] slots, final long[] ids,
            final int items)
        {
            priorities = java.util.Arrays.copyOf(p, count);
        }

        @Override
        public void nextUpdate()
        {
            throw new AssertionError("one update per call");
        }
    }
}
