package org.ding4j.torch;

import static org.ding4j.torch.FlatParametersTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every bad argument at the native boundary is an IllegalArgumentException naming it, never a JVM crash. */
@Tag("native")
class BadInputTest
{
    @BeforeAll
    static void init()
    {
        TorchTesting.init();
    }

    @Test
    void shouldRejectBadHyperParameters()
    {
        assertMessage("lr: expected a finite number >= 0, got NaN", () -> AdamConfig.adam(Double.NaN));
        assertMessage("lr: expected a finite number >= 0, got -0.1", () -> AdamConfig.adam(-0.1));
        assertMessage("lr: expected a finite number >= 0, got Infinity", () -> SgdConfig.sgd(Double.POSITIVE_INFINITY, 0));
        assertMessage("beta1: expected a number in [0, 1), got -0.5", () -> AdamConfig.adam(1e-3).withBetas(-0.5, 0.9));
        assertMessage("beta2: expected a number in [0, 1), got 1.0", () -> AdamConfig.adam(1e-3).withBetas(0.9, 1.0));
        assertMessage("eps: expected a finite number >= 0, got -1.0E-8", () -> AdamConfig.adam(1e-3).withEps(-1e-8));
        assertMessage("weight_decay: expected a finite number >= 0, got NaN",
            () -> AdamConfig.adam(1e-3).withWeightDecay(Double.NaN));
        assertMessage("momentum: expected a finite number >= 0, got -0.9", () -> SgdConfig.sgd(0.1, -0.9));
        assertMessage("nesterov: requires momentum > 0 and dampening = 0, got momentum=0.0",
            () -> new SgdConfig(0.1, 0.0, 0.0, 0.0, true));
    }

    @Test
    void shouldRejectBadBuffers()
    {
        try (PointerScope scope = new PointerScope())
        {
            final AdamConfig adam = AdamConfig.adam(1e-3);
            final Tensor p = torch.randn(4, 3);
            final Tensor g = torch.randn(4, 3);
            final Tensor m = torch.zeros(4, 3);
            final Tensor v = torch.zeros(4, 3);
            final Tensor strided = torch.randn(3, 4).t();
            final Tensor shorter = torch.zeros(11);
            final Tensor doubles = torch.zeros(12).to(torch.ScalarType.Double);
            final Tensor empty = torch.zeros(0);

            assertMessage("grad: expected a contiguous tensor, got a strided view",
                () -> FusedKernels.adamStep(p, strided, m, v, null, adam, 1, 1.0f));
            assertMessage("exp_avg_sq: expected numel=12, got numel=11",
                () -> FusedKernels.adamStep(p, g, m, shorter, null, adam, 1, 1.0f));
            assertMessage("exp_avg: expected dtype Float, got Double",
                () -> FusedKernels.adamStep(p, g, doubles, v, null, adam, 1, 1.0f));
            assertMessage("param: zero-length buffer", () -> FusedKernels.adamStep(empty, g, m, v, null, adam, 1, 1.0f));
            assertMessage("max_exp_avg_sq: undefined tensor",
                () -> FusedKernels.adamStep(p, g, m, v, null, adam.withAmsgrad(true), 1, 1.0f));
            assertMessage("param: undefined tensor", () -> FusedKernels.adamStep(new Tensor(), g, m, v, null, adam, 1, 1.0f));
            assertMessage("step: expected a step count >= 1, got 0",
                () -> FusedKernels.adamStep(p, g, m, v, null, adam, 0, 1.0f));
            assertMessage("grad_scale: expected a number in (0, 1], got NaN",
                () -> FusedKernels.adamStep(p, g, m, v, null, adam, 1, Float.NaN));
            assertMessage("momentum_buffer: expected numel=12, got numel=11",
                () -> FusedKernels.sgdStep(p, g, shorter, SgdConfig.sgd(0.1, 0.9), true, 1.0f));
            assertMessage("buffer: expected a contiguous tensor", () -> FusedKernels.sumSquares(strided));
            assertMessage("max_grad_norm: expected a finite number >= 0, got -1.0",
                () -> new FusedSgd(null == p ? null : flatOf(p), SgdConfig.sgd(0.1, 0), -1.0));
        }
    }

    @Test
    void shouldRejectParameterGroupsTheKernelsCannotTake()
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor w = torch.randn(5).to(torch.ScalarType.Double).requires_grad_(true);
            try (FlatParameters flat = FlatParameters.of(java.util.List.of("w"), java.util.List.of(w)))
            {
                assertMessage("parameter group Double@cpu values: expected dtype Float, got Double",
                    () -> new FusedAdam(flat, AdamConfig.adam(1e-3)));
            }
        }
    }

    @Test
    void shouldApplyTheCheckedKernelLikeTheOptimizer()
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor p = torch.ones(6);
            final Tensor g = torch.full(new long[] {6}, new org.bytedeco.pytorch.Scalar(2.0));
            final Tensor buf = torch.zeros(6);
            FusedKernels.sgdStep(p, g, buf, SgdConfig.sgd(0.5, 0.9), true, 0.5f);
            // d = 2 * 0.5 = 1; first step: buf = d; p = 1 - 0.5 * 1.
            assertEquals(3.0, p.sum().item_double(), 1e-6);
            assertEquals(6.0, buf.sum().item_double(), 1e-6);
            assertEquals(24.0, FusedKernels.sumSquares(g), 1e-9);
        }
    }

    @Test
    void shouldFailCleanlyAfterClose()
    {
        try (PointerScope scope = new PointerScope())
        {
            final FlatParameters flat = flatOf(torch.randn(3));
            final FusedAdam adam = new FusedAdam(flat, AdamConfig.adam(1e-3));
            adam.close();
            adam.close();
            final IllegalStateException ex =
                org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, adam::step);
            assertEquals("FusedAdam is closed", ex.getMessage());
            flat.close();
            final IllegalStateException flatClosed =
                org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, flat::zeroGrad);
            assertEquals("flat grads Float@cpu is closed", flatClosed.getMessage());
        }
    }

    private static FlatParameters flatOf(final Tensor t)
    {
        return FlatParameters.of(java.util.List.of("w"), java.util.List.of(t.requires_grad_(true)));
    }
}
