package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fused MLP step against libtorch autograd with the same fused Adam, over widths and depths, ReLU and Tanh, MSE
 * and Huber, with and without per-sample weights: gradients and parameters within 1e-5 (relative to the largest
 * magnitude) after one step; then, for 199 more steps each taken by both from the autograd run's state, the
 * gradients within 1e-5 at 90% of the steps and within 2e-2 at all (a rounding-level ReLU switch moves a few).
 */
class FusedMlpStepTest
{
    @ParameterizedTest
    @CsvSource({"4 128 128 2,64,RELU,MSE,false", "4 32 2,16,RELU,MSE,false", "8 16 16 16 3,32,RELU,MSE,false",
        "4 128 128 2,64,TANH,MSE,true", "4 32 2,16,RELU,HUBER,false", "8 16 16 16 3,32,TANH,HUBER,true",
        "4 64 2,32,RELU,HUBER,true"})
    void fusedShouldMatchAutograd(final String widths, final int batch, final Activation activation,
        final RegressionLoss loss, final boolean weighted)
    {
        Threads.configure();
        final long[] sizes = java.util.Arrays.stream(widths.split(" ")).mapToLong(Long::parseLong).toArray();
        torch.manual_seed(3);
        final MlpRegressor eager = new MlpRegressor(Mlp.of(activation, sizes), AdamConfig.adam(1e-2), 0, loss);
        torch.manual_seed(3);
        final MlpRegressor fused = new MlpRegressor(Mlp.of(activation, sizes), AdamConfig.adam(1e-2), 0, loss);
        fused.fusedStep(batch);
        try (eager; fused)
        {
            int tight = 0;
            for (int step = 0; step < 200; step++)
            {
                try (PointerScope scope = new PointerScope())
                {
                    torch.manual_seed(100 + step);
                    final Tensor x = torch.randn(batch, sizes[0]);
                    // Targets spread by 2, so that Huber's linear part is reached too.
                    final Tensor y = torch.randn(batch, sizes[sizes.length - 1]).mul(new Scalar(2.0));
                    final Tensor w = weighted ? torch.rand(batch).add(new Scalar(0.2)) : null;
                    if (step > 0)
                    {
                        // One step at a time from the same state (as FusedActorCriticTest): two runs side by side
                        // compound rounding, so their distance after 200 steps depends on the CPU's BLAS kernels.
                        try (NoGradGuard noGrad = new NoGradGuard())
                        {
                            fused.parameters().group(0).values().copy_(eager.parameters().group(0).values());
                        }
                        fused.optimizer().loadStateDict(eager.optimizer().stateDict());
                    }
                    final double a = eager.step(x, y, w);
                    final double b = fused.step(x, y, w);
                    final double grads = TorchTesting.relativeDifference(fused.parameters().group(0).grads(),
                        eager.parameters().group(0).grads());
                    assertTrue(grads <= 2e-2, "step " + step + ": gradients differ by " + grads);
                    tight += grads <= 1e-5 ? 1 : 0;
                    if (0 == step)
                    {
                        assertEquals(a, b, 1e-5 * Math.max(1, Math.abs(a)), "loss");
                        assertTrue(grads < 1e-5, "gradients after one step differ by " + grads);
                        // Adam's first step is lr * g / (|g| + 1e-8): where a gradient is near that epsilon (a
                        // saturated Tanh unit: 1 - y^2 of a y within float rounding of 1), the same relative rounding
                        // moves the step by up to lr. The gradients themselves are compared everywhere above.
                        final Tensor g = eager.parameters().group(0).grads();
                        final Tensor outsideEpsilon = g.abs().gt(new Scalar(1e-6)).to(torch.ScalarType.Float);
                        final double params = TorchTesting.relativeDifference(
                            fused.parameters().group(0).values().mul(outsideEpsilon),
                            eager.parameters().group(0).values().mul(outsideEpsilon));
                        assertTrue(params < 1e-5, "parameters after one step differ by " + params);
                    }
                }
            }
            assertTrue(tight >= 180, "gradients within 1e-5 at only " + tight + " of 200 steps");
        }
    }

    /**
     * Backward one layer per native call (for a reducer that overlaps it) runs the same arithmetic as one call: the
     * parameters stay bit-identical, and each stage reports a lower frontier until every gradient is final.
     */
    @Test
    void backwardInStagesShouldMatchOneCallBitForBitAndReportFallingFrontiers()
    {
        Threads.configure();
        final long[] sizes = {8, 32, 16, 16, 3};
        torch.manual_seed(5);
        final MlpRegressor oneCall = new MlpRegressor(Mlp.of(Activation.RELU, sizes), AdamConfig.adam(1e-2), 0);
        torch.manual_seed(5);
        final MlpRegressor staged = new MlpRegressor(Mlp.of(Activation.RELU, sizes), AdamConfig.adam(1e-2), 0);
        oneCall.fusedStep(32);
        staged.fusedStep(32);
        final java.util.List<Long> frontiers = new java.util.ArrayList<>();
        staged.optimizer().gradientReducer(new GradientReducer()
        {
            @Override
            public void reduce(final FlatParameters params)
            {
                frontiers.add(-1L);
            }

            @Override
            public boolean overlapsBackward()
            {
                return true;
            }

            @Override
            public void gradientsFinal(final FlatParameters params, final int group, final long from)
            {
                assertEquals(0, group);
                frontiers.add(from);
            }
        });
        try (oneCall; staged)
        {
            for (int step = 0; step < 20; step++)
            {
                try (PointerScope scope = new PointerScope())
                {
                    torch.manual_seed(200 + step);
                    final Tensor x = torch.randn(32, sizes[0]);
                    final Tensor y = torch.randn(32, sizes[sizes.length - 1]);
                    assertEquals(oneCall.step(x, y), staged.step(x, y), 0.0, "loss at step " + step);
                }
            }
            assertTrue(torch.equal(oneCall.parameters().group(0).values(), staged.parameters().group(0).values()),
                "staged backward changed the parameters");
        }
        // Per step: one frontier per Linear layer, falling to 0, then the reduce before the optimizer step.
        final int layers = sizes.length - 1;
        assertEquals(20 * (layers + 1), frontiers.size(), frontiers::toString);
        for (int step = 0; step < 20; step++)
        {
            final java.util.List<Long> one = frontiers.subList(step * (layers + 1), (step + 1) * (layers + 1));
            for (int i = 1; i < layers; i++)
            {
                assertTrue(one.get(i) < one.get(i - 1), "frontiers must fall: " + one);
            }
            assertEquals(0L, one.get(layers - 1), one::toString);
            assertEquals(-1L, one.get(layers), one::toString);
        }
    }

    @Test
    void tensorsRefilledInPlaceAndNewTensorsShouldBothBeRead()
    {
        Threads.configure();
        torch.manual_seed(5);
        final MlpRegressor eager = new MlpRegressor(Mlp.of(4, 16, 2), AdamConfig.adam(1e-2), 0);
        torch.manual_seed(5);
        final MlpRegressor fused = new MlpRegressor(Mlp.of(4, 16, 2), AdamConfig.adam(1e-2), 0);
        fused.fusedStep(8);
        try (eager; fused; PointerScope scope = new PointerScope())
        {
            final Tensor x = torch.zeros(8, 4);
            final Tensor y = torch.zeros(8, 2);
            for (int step = 0; step < 6; step++)
            {
                // Steps 0-2 refill the bound tensors in place; steps 3-5 pass new ones each time.
                Tensor xs = x;
                Tensor ys = y;
                if (step < 3)
                {
                    x.copy_(torch.randn(8, 4));
                    y.copy_(torch.randn(8, 2));
                }
                else
                {
                    xs = torch.randn(8, 4);
                    ys = torch.randn(8, 2);
                }
                final double a = eager.step(xs, ys);
                assertEquals(a, fused.step(xs, ys), 1e-5 * Math.max(1, Math.abs(a)), "loss of step " + step);
            }
        }
    }

    @Test
    void aBatchOfAnotherShapeShouldBeRefused()
    {
        Threads.configure();
        try (MlpRegressor regressor = new MlpRegressor(Mlp.of(4, 8, 2), AdamConfig.adam(1e-2), 0);
            PointerScope scope = new PointerScope())
        {
            regressor.fusedStep(16);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> regressor.step(torch.randn(8, 4), torch.randn(8, 2)));
            assertTrue(ex.getMessage().contains("inputs must be a contiguous CPU float32 tensor of [16, 4], got float32 "
                + "[8, 4] on cpu, contiguous"), ex.getMessage());
            // A bound tensor closed afterwards is refused, not read through its stale address.
            final Tensor x = torch.randn(16, 4);
            final Tensor y = torch.randn(16, 2);
            regressor.step(x, y);
            x.close();
            final IllegalArgumentException closed = assertThrows(IllegalArgumentException.class,
                () -> regressor.step(x, y));
            assertTrue(closed.getMessage().endsWith("got a closed tensor"), closed.getMessage());
        }
    }

    @Test
    void weightsThatAreNotOnePerSampleShouldBeRefusedOnBothPaths()
    {
        Threads.configure();
        try (MlpRegressor eager = new MlpRegressor(Mlp.of(4, 8, 2), AdamConfig.adam(1e-2), 0);
            MlpRegressor fused = new MlpRegressor(Mlp.of(4, 8, 2), AdamConfig.adam(1e-2), 0);
            PointerScope scope = new PointerScope())
        {
            fused.fusedStep(16);
            final Tensor x = torch.randn(16, 4);
            final Tensor y = torch.randn(16, 2);
            final Tensor column = torch.ones(16, 1);
            final IllegalArgumentException a = assertThrows(IllegalArgumentException.class,
                () -> eager.step(x, y, column));
            assertEquals("weights: expected one per sample, shape [16], got [16, 1]", a.getMessage());
            final IllegalArgumentException b = assertThrows(IllegalArgumentException.class,
                () -> fused.step(x, y, column));
            assertTrue(b.getMessage().contains("weights must be a contiguous CPU float32 tensor of [16], got float32 "
                + "[16, 1]"), b.getMessage());
        }
    }
}
