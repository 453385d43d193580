package org.ding4j.example.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Activation;
import org.ding4j.torch.Threads;
import org.ding4j.torch.TorchTesting;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fused native DQN update against libtorch autograd with the same optimizer, on random nets and batches:
 * gradients and parameters equal within 1e-5 (relative to the largest magnitude) after one update, and within 1e-3
 * after 200; loss and priorities alike.
 */
class DqnPolicyFusedTest
{
    private static final int OBS = 4;
    private static final int ACTIONS = 3;
    private static final int BATCH = 16;

    /** Keeps the last value written per index and the priorities. */
    private static final class Values implements LogSink
    {
        final double[] values = new double[8];
        final double[] priorities = new double[BATCH];
        int keys;

        @Override
        public int register(final String key)
        {
            return keys++;
        }

        @Override
        public void put(final int index, final double value)
        {
            values[index] = value;
        }

        @Override
        public void value(final String key, final Object value)
        {
            throw new AssertionError(key);
        }

        @Override
        public void priority(final double[] p, final int count, final int[] slots, final long[] ids,
            final int items)
        {
            System.arraycopy(p, 0, priorities, 0, count);
        }

        @Override
        public void nextUpdate()
        {
            throw new AssertionError("one update per call");
        }
    }

    private static void fill(final DqnBatch batch, final SplittableRandom random)
    {
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = (float)random.nextGaussian();
            batch.nextObs[i] = (float)random.nextGaussian();
        }
        for (int i = 0; i < BATCH; i++)
        {
            batch.action[i] = random.nextInt(ACTIONS);
            batch.nstepReturn[i] = (float)random.nextDouble(-1, 2);
            batch.bootstrap[i] = random.nextInt(4) == 0 ? 0f : 0.97f;
            batch.weight[i] = (float)random.nextDouble(0.2, 1.5);
        }
    }

    @ParameterizedTest
    @CsvSource({"8,true,false,RELU", "8,false,true,RELU", "16 8,true,true,RELU", "16 8,false,false,RELU",
        "32 32 16,true,false,RELU", "32 32 16,false,true,RELU", "8,true,true,TANH", "16 8,false,false,TANH",
        "32 32 16,true,false,TANH"})
    void fusedShouldMatchAutogradAfterOneAndTwoHundredUpdates(final String widths, final boolean dueling,
        final boolean huber, final Activation activation)
    {
        Threads.configure();
        final long[] hidden = java.util.Arrays.stream(widths.split(" ")).mapToLong(Long::parseLong).toArray();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, hidden, dueling, BATCH, 1e-3, 25,
            0.0, huber, 0.0, activation);
        torch.manual_seed(11);
        final DqnPolicy eager = new DqnPolicy(settings);
        torch.manual_seed(11);
        final DqnPolicy fused = new DqnPolicy(settings);
        fused.fusedUpdate(true);
        assertTrue(fused.fusedUpdate());
        try (eager; fused; DqnBatch batch = new DqnBatch(BATCH, OBS))
        {
            final Values eagerLog = new Values();
            final Values fusedLog = new Values();
            eager.registerLogVars(eagerLog);
            fused.registerLogVars(fusedLog);
            final SplittableRandom random = new SplittableRandom(widths.hashCode() + (dueling ? 1 : 0));
            fill(batch, random);
            eager.forward(batch, eagerLog);
            fused.forward(batch, fusedLog);
            final double gradients = TorchTesting.relativeDifference(fused.parameters().group(0).grads(),
                eager.parameters().group(0).grads());
            assertTrue(gradients < 1e-5, "gradients after one update differ by " + gradients);
            final double parameters = TorchTesting.relativeDifference(fused.parameters().group(0).values(),
                eager.parameters().group(0).values());
            assertTrue(parameters < 1e-5, "parameters after one update differ by " + parameters);
            for (int k = 1; k < 4; k++)
            {
                assertEquals(eagerLog.values[k], fusedLog.values[k], 1e-5 * Math.max(1, Math.abs(eagerLog.values[k])),
                    "log var " + k);
            }
            for (int i = 0; i < BATCH; i++)
            {
                assertEquals(eagerLog.priorities[i], fusedLog.priorities[i],
                    1e-5 * Math.max(1, eagerLog.priorities[i]));
            }
            for (int u = 1; u < 200; u++)
            {
                fill(batch, random);
                eager.forward(batch, eagerLog);
                fused.forward(batch, fusedLog);
            }
            final double after = TorchTesting.relativeDifference(fused.parameters().group(0).values(),
                eager.parameters().group(0).values());
            assertTrue(after < 1e-3, "parameters after 200 updates differ by " + after);
            final double targets = TorchTesting.relativeDifference(fused.targetParameters().group(0).values(),
                eager.targetParameters().group(0).values());
            assertTrue(targets < 1e-3, "target nets after 200 updates differ by " + targets);
        }
    }

    @org.junit.jupiter.api.Test
    void aBatchOfAnotherShapeShouldBeRefused()
    {
        Threads.configure();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, new long[] {8}, true, BATCH, 1e-3,
            25, 0.0, false, 0.0);
        try (DqnPolicy policy = new DqnPolicy(settings); DqnBatch other = new DqnBatch(BATCH / 2, OBS))
        {
            policy.fusedUpdate(true);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> policy.forward(other, new Values()));
            assertTrue(ex.getMessage().contains("expected a DqnBatch of 16 samples"), ex.getMessage());
        }
    }
}
