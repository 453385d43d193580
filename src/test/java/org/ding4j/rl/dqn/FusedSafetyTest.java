package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FusedDqnUpdate;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a caller can pass the fused DQN path that would once have made the native code read or write outside its
 * buffers: each ends in an {@link IllegalArgumentException} naming the tensor and the bound, with nothing written.
 * Under the sanitizer build ({@code .ci/run}) the same tests run with AddressSanitizer watching the native code.
 */
class FusedSafetyTest
{
    private static final int OBS = 4;
    private static final int ACTIONS = 3;
    private static final int BATCH = 8;

    private static DqnPolicy policy(final Activation activation, final int batch)
    {
        Threads.configure();
        torch.manual_seed(3);
        final DqnPolicy policy = new DqnPolicy(new DqnPolicy.Settings(OBS, ACTIONS, new long[] {16}, true, batch,
            1e-3, 25, 0.0, false, 0.0, activation));
        policy.fusedUpdate(true);
        return policy;
    }

    private static DqnBatch batch(final int size)
    {
        final DqnBatch batch = new DqnBatch(size, OBS);
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = 0.1f * (i % 7);
            batch.nextObs[i] = 0.1f * (i % 5);
        }
        java.util.Arrays.fill(batch.bootstrap, 0.9f);
        batch.upload();
        return batch;
    }

    private static float[] values(final Tensor t)
    {
        final float[] out = new float[(int)t.numel()];
        new FloatPointer(t.data_ptr()).get(out);
        return out;
    }

    @Test
    void anActionOutsideTheActionCountShouldBeRefusedBeforeAnythingIsWritten()
    {
        for (final long bad : new long[] {ACTIONS, 7, -1, Long.MAX_VALUE, Long.MIN_VALUE})
        {
            try (DqnPolicy policy = policy(Activation.RELU, BATCH); DqnBatch batch = batch(BATCH))
            {
                policy.forward(batch, LogSink.discard());
                final float[] params = values(policy.parameters().group(0).values());
                final float[] grads = values(policy.parameters().group(0).grads());
                batch.action[5] = bad;
                batch.upload();
                final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                    () -> policy.forward(batch, LogSink.discard()));
                assertEquals("FusedDqnUpdate: action[5] = " + bad + " lies outside [0, 3)", ex.getMessage());
                assertTrue(java.util.Arrays.equals(params, values(policy.parameters().group(0).values())),
                    "parameters changed");
                assertTrue(java.util.Arrays.equals(grads, values(policy.parameters().group(0).grads())),
                    "gradients changed");
                assertEquals(1, policy.updates(), "the refused update was counted");
            }
        }
    }

    @Test
    void aBindingShouldOnlyServeTheUpdateThatMadeIt()
    {
        try (DqnPolicy small = policy(Activation.RELU, BATCH); DqnPolicy large = policy(Activation.RELU, 4 * BATCH);
            DqnBatch batch = batch(BATCH); Tensor td = torch.zeros(BATCH);
            FusedDqnUpdate smallUpdate = update(small, BATCH, Activation.RELU);
            FusedDqnUpdate largeUpdate = update(large, 4 * BATCH, Activation.RELU))
        {
            final FusedDqnUpdate.Batch bound = smallUpdate.bind(batch.obsTensor(), batch.nextObsTensor(),
                batch.actionTensor(), batch.returnTensor(), batch.bootstrapTensor(), batch.weightTensor(), td);
            smallUpdate.update(bound, false);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> largeUpdate.update(bound, false));
            assertTrue(ex.getMessage().contains("this binding was made by another FusedDqnUpdate"), ex.getMessage());
        }
    }

    @Test
    void aTensorClosedOrResizedAfterBindingShouldBeRefused()
    {
        try (DqnPolicy policy = policy(Activation.RELU, BATCH); DqnBatch batch = batch(BATCH);
            FusedDqnUpdate update = update(policy, BATCH, Activation.RELU))
        {
            final Tensor td = torch.zeros(BATCH);
            final FusedDqnUpdate.Batch bound = update.bind(batch.obsTensor(), batch.nextObsTensor(),
                batch.actionTensor(), batch.returnTensor(), batch.bootstrapTensor(), batch.weightTensor(), td);
            td.resize_(new long[] {2 * BATCH});
            IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> update.update(bound, false));
            assertEquals("FusedDqnUpdate: td has 16 elements, bound with 8 (resized since it was bound: bind it again)",
                ex.getMessage());
            td.close();
            ex = assertThrows(IllegalArgumentException.class, () -> update.update(bound, false));
            assertEquals("FusedDqnUpdate: td was closed after it was bound", ex.getMessage());
        }
    }

    @Test
    void aClosedNetShouldBeRefused()
    {
        final DqnPolicy policy = policy(Activation.RELU, BATCH);
        try (DqnBatch batch = batch(BATCH); Tensor td = torch.zeros(BATCH);
            FusedDqnUpdate update = update(policy, BATCH, Activation.RELU))
        {
            final FusedDqnUpdate.Batch bound = update.bind(batch.obsTensor(), batch.nextObsTensor(),
                batch.actionTensor(), batch.returnTensor(), batch.bootstrapTensor(), batch.weightTensor(), td);
            policy.close();
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> update.update(bound, false));
            assertEquals("FusedDqnUpdate: the online net's parameters was closed after it was bound",
                ex.getMessage());
        }
    }

    @Test
    @Tag("own-jvm")
    void theBindingOfADroppedBatchShouldBeReleased() throws InterruptedException
    {
        try (DqnPolicy policy = policy(Activation.RELU, BATCH); DqnBatch kept = batch(BATCH))
        {
            DqnBatch dropped = batch(BATCH);
            policy.forward(dropped, LogSink.discard());
            policy.forward(kept, LogSink.discard());
            final WeakReference<DqnBatch> ref = new WeakReference<>(dropped);
            dropped.close();
            dropped = null;
            // A bounded wait for the collector, not a sleep standing in for an event: a binding kept in the policy
            // holds the batch strongly and the reference never clears.
            for (int i = 0; i < 500 && null != ref.get(); i++)
            {
                System.gc();
                Thread.sleep(10);
            }
            assertEquals(null, ref.get(), "the policy still holds the dropped batch");
            policy.forward(kept, LogSink.discard());
        }
    }

    @Test
    void theFusedTanhShouldMatchLibtorchOverTheWholeFloatRange()
    {
        final float[] extremes = {1e4f, -1e4f, 5100f, -5100f, 1e20f, -1e20f, Float.MAX_VALUE,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 20f, 9f, 0.625f, -0.6f, 1e-30f, 0f};
        try (DqnPolicy policy = policy(Activation.TANH, extremes.length);
            FusedDqnUpdate update = update(policy, extremes.length, Activation.TANH);
            PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
        {
            // Each row is one extreme in the first input and zeros elsewhere: the first layer's pre-activations are
            // then w * x + b, +-inf or +-huge, exactly what the kernel's tanh sees first.
            final float[] rows = new float[extremes.length * OBS];
            for (int i = 0; i < extremes.length; i++)
            {
                rows[i * OBS] = extremes[i];
            }
            final Tensor obs = torch.zeros(extremes.length, OBS);
            new FloatPointer(obs.data_ptr()).put(rows);
            final Tensor q = torch.zeros(extremes.length, ACTIONS);
            update.qValues(update.bindForward(policy.parameters(), obs, q));
            final float[] fused = values(q);
            final float[] reference = values(policy.online().forward(obs).contiguous());
            for (int i = 0; i < fused.length; i++)
            {
                final String where = "x = " + extremes[i / ACTIONS] + ", action " + i % ACTIONS;
                assertEquals(Float.isNaN(reference[i]), Float.isNaN(fused[i]), where + ": " + fused[i] + " vs "
                    + reference[i]);
                if (!Float.isNaN(reference[i]))
                {
                    assertEquals(reference[i], fused[i], 1e-5f * Math.max(1f, Math.abs(reference[i])), where);
                }
            }
        }
    }

    private static FusedDqnUpdate update(final DqnPolicy policy, final int batch, final Activation activation)
    {
        final long[] hidden = policy.settings().hidden();
        return new FusedDqnUpdate(policy.parameters(), policy.targetParameters(), hidden, OBS, ACTIONS, true,
            activation, batch, DqnPolicy.layerOffsets(policy.parameters(), hidden, true));
    }
}
