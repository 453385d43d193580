package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Activation;
import org.ding4j.torch.Threads;
import org.ding4j.torch.TorchTesting;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fused native DQN update against libtorch autograd with the same optimizer, on random nets and batches: gradients
 * and parameters equal within 1e-5 (relative to the largest magnitude) after the first update, loss and priorities
 * alike. Then, at each of {@value #STATES} states along the autograd run's trajectory, the fused policy is loaded with
 * that state and both take one update on the same batch: the gradients must agree within 1e-5 at 90% of the states and
 * within {@value #LOOSE} at all, the parameters within two opposite Adam steps. Two runs side by side would compound
 * rounding chaotically (a ReLU switched by rounding, then Adam's step of the learning rate's size), so their distance
 * after 200 updates depends on the CPU's BLAS kernels, not on the code; one update from one state does not.
 */
class DqnPolicyFusedTest
{
    private static final int OBS = 4;
    private static final int ACTIONS = 3;
    private static final int BATCH = 16;
    private static final int STATES = 200;
    private static final double LR = 1e-3;
    private static final double LOOSE = 2e-2;

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

    /** Random observations, actions, n-step returns, bootstraps (some terminal) and importance weights. */
    static void fill(final DqnBatch batch, final SplittableRandom random)
    {
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = (float)random.nextGaussian();
            batch.nextObs[i] = (float)random.nextGaussian();
        }
        for (int i = 0; i < batch.size(); i++)
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
    void fusedShouldMatchAutogradFromEachState(final String widths, final boolean dueling,
        final boolean huber, final Activation activation)
    {
        Threads.configure();
        final long[] hidden = java.util.Arrays.stream(widths.split(" ")).mapToLong(Long::parseLong).toArray();
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(OBS, ACTIONS, hidden, dueling, BATCH, 1e-3, 25,
            0.0, huber, 0.0, activation);
        torch.manual_seed(11);
        final DqnPolicy eager = new DqnPolicy(settings);
        eager.fusedUpdate(false);
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
            // From here on, one update at a time from the same state (see the class comment): the fused policy
            // takes the autograd one's state before each update, so rounding differences cannot compound.
            int tight = 0;
            for (int u = 1; u < STATES; u++)
            {
                fill(batch, random);
                try (PointerScope scope = new PointerScope())
                {
                    fused.loadStateDict(eager.stateDict());
                    eager.forward(batch, eagerLog);
                    fused.forward(batch, fusedLog);
                    final double g = TorchTesting.relativeDifference(fused.parameters().group(0).grads(),
                        eager.parameters().group(0).grads());
                    assertTrue(g <= LOOSE, "state " + u + ": gradients differ by " + g + " (limit " + LOOSE + ")");
                    tight += g <= 1e-5 ? 1 : 0;
                    final double p = fused.parameters().group(0).values().sub(eager.parameters().group(0).values())
                        .abs().max().item_double();
                    // Two opposite Adam steps of the largest size, (1 - beta1) / sqrt(1 - beta2) lr each.
                    final double bound = 2 * LR * 0.1 / Math.sqrt(0.001) * (1 + 1e-3);
                    assertTrue(p <= bound, "state " + u + ": parameters differ by " + p + " after one update (limit "
                        + bound + ": two opposite Adam steps at lr " + LR + ")");
                    assertEquals(eager.updates(), fused.updates(), "updates");
                }
            }
            assertTrue(tight >= 0.9 * (STATES - 1), "gradients within 1e-5 at only " + tight + " of " + (STATES - 1)
                + " states");
            final double targets = TorchTesting.relativeDifference(fused.targetParameters().group(0).values(),
                eager.targetParameters().group(0).values());
            assertTrue(targets <= 0.1 / Math.sqrt(0.001) * 2 * LR, "target nets differ by " + targets);
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
