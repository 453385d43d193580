package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fused MLP step against libtorch autograd with the same fused Adam: gradients and parameters within 1e-5
 * (relative to the largest magnitude) after one step, parameters within 1e-3 after 200.
 */
class FusedMlpStepTest
{
    @ParameterizedTest
    @CsvSource({"4 128 128 2,64", "4 32 2,16", "8 16 16 16 3,32"})
    void fusedShouldMatchAutograd(final String widths, final int batch)
    {
        Threads.configure();
        final long[] sizes = java.util.Arrays.stream(widths.split(" ")).mapToLong(Long::parseLong).toArray();
        torch.manual_seed(3);
        final MlpRegressor eager = new MlpRegressor(Mlp.of(sizes), AdamConfig.adam(1e-2), 0);
        torch.manual_seed(3);
        final MlpRegressor fused = new MlpRegressor(Mlp.of(sizes), AdamConfig.adam(1e-2), 0);
        fused.fusedStep(batch);
        try (eager; fused)
        {
            for (int step = 0; step < 200; step++)
            {
                try (PointerScope scope = new PointerScope())
                {
                    torch.manual_seed(100 + step);
                    final Tensor x = torch.randn(batch, sizes[0]);
                    final Tensor y = torch.randn(batch, sizes[sizes.length - 1]);
                    final double a = eager.step(x, y);
                    final double b = fused.step(x, y);
                    if (0 == step)
                    {
                        assertEquals(a, b, 1e-5 * Math.max(1, Math.abs(a)), "loss");
                        final double grads = TorchTesting.relativeDifference(fused.parameters().group(0).grads(),
                            eager.parameters().group(0).grads());
                        assertTrue(grads < 1e-5, "gradients after one step differ by " + grads);
                        final double params = TorchTesting.relativeDifference(fused.parameters().group(0).values(),
                            eager.parameters().group(0).values());
                        assertTrue(params < 1e-5, "parameters after one step differ by " + params);
                    }
                }
            }
            final double after = TorchTesting.relativeDifference(fused.parameters().group(0).values(),
                eager.parameters().group(0).values());
            assertTrue(after < 1e-3, "parameters after 200 steps differ by " + after);
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
            assertTrue(ex.getMessage().contains("inputs must be a contiguous CPU float32 tensor of [16, 4]"),
                ex.getMessage());
        }
    }
}
