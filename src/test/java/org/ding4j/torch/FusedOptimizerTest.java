package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Function;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Adam;
import org.bytedeco.pytorch.AdamOptions;
import org.bytedeco.pytorch.AdamW;
import org.bytedeco.pytorch.AdamWOptions;
import org.bytedeco.pytorch.Optimizer;
import org.bytedeco.pytorch.SGD;
import org.bytedeco.pytorch.SGDOptions;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The fused optimizers against libtorch's own, on a real MLP and real gradients. */
@Tag("native")
class FusedOptimizerTest
{
    private static final long[] NET = {4, 64, 64, 2};

    @BeforeAll
    static void init()
    {
        TorchTesting.init();
    }

    @Test
    void shouldMatchLibtorchAdam()
    {
        compare(AdamConfig.adam(1e-3), 0.0, params -> {
            final AdamOptions options = new AdamOptions(1e-3);
            return new Adam(params, options);
        });
    }

    @Test
    void shouldMatchLibtorchAdamWithL2WeightDecayAndAmsgrad()
    {
        final AdamConfig config = AdamConfig.adam(3e-3).withBetas(0.8, 0.99).withEps(1e-6).withWeightDecay(0.05)
            .withAmsgrad(true);
        compare(config, 0.0, params -> {
            final AdamOptions options = new AdamOptions(3e-3);
            // libstdc++ lays std::tuple<double, double> out last element first: betas() points at beta2.
            assertEquals(0.999, options.betas().get(0));
            options.betas().put(0, 0.99).put(1, 0.8);
            options.eps().put(1e-6);
            options.weight_decay().put(0.05);
            options.amsgrad().put(true);
            return new Adam(params, options);
        });
    }

    @Test
    void shouldMatchLibtorchAdamW()
    {
        compare(AdamConfig.adamW(2e-3).withWeightDecay(0.1), 0.0, params -> {
            final AdamWOptions options = new AdamWOptions(2e-3);
            options.weight_decay().put(0.1);
            return new AdamW(params, options);
        });
    }

    @Test
    void shouldMatchLibtorchSgdWithMomentumDampeningAndWeightDecay()
    {
        compare(new SgdConfig(0.05, 0.9, 0.1, 1e-3, false), 0.0, params -> {
            final SGDOptions options = new SGDOptions(0.05);
            options.momentum().put(0.9);
            options.dampening().put(0.1);
            options.weight_decay().put(1e-3);
            return new SGD(params, options);
        });
    }

    @Test
    void shouldMatchLibtorchSgdWithNesterov()
    {
        compare(new SgdConfig(0.02, 0.9, 0.0, 0.0, true), 0.0, params -> {
            final SGDOptions options = new SGDOptions(0.02);
            options.momentum().put(0.9);
            options.nesterov().put(true);
            return new SGD(params, options);
        });
    }

    @Test
    void shouldMatchClipGradNormFollowedByLibtorchAdam()
    {
        // A limit well under the gradient norm of this net, so that every step is clipped.
        compare(AdamConfig.adam(1e-3), 0.05, params -> new Adam(params, new AdamOptions(1e-3)));
    }

    /**
     * Trains two identical MLPs on the same batches, one with libtorch's optimizer and one with the fused one:
     * one step within 1e-6 relative, 200 steps within 1e-4.
     */
    private static void compare(
        final Object config, final double maxGradNorm, final Function<TensorVector, Optimizer> reference)
    {
        try (Mlp expected = FlatParametersTest.seededMlp(11, NET);
            Mlp actual = FlatParametersTest.seededMlp(11, NET);
            FlatParameters flat = FlatParameters.of(actual.module());
            FusedOptimizer<?> fused = fused(flat, config, maxGradNorm);
            PointerScope scope = new PointerScope())
        {
            final TensorVector params = expected.module().parameters();
            final Optimizer libtorch = reference.apply(params);
            double worst = 0.0;
            for (int step = 1; step <= 200; step++)
            {
                final Tensor[] batch = TorchTesting.batch(1000 + step, 32, NET[0], NET[NET.length - 1]);
                try (PointerScope stepScope = new PointerScope())
                {
                    libtorch.zero_grad();
                    TorchTesting.lossAndBackward(expected, batch);
                    if (maxGradNorm > 0.0)
                    {
                        final double norm = torch.clip_grad_norm_(params, maxGradNorm);
                        assertTrue(norm > maxGradNorm, "the test must clip: norm=" + norm);
                    }
                    libtorch.step();

                    flat.zeroGrad();
                    TorchTesting.lossAndBackward(actual, batch);
                    final double fusedNorm = fused.step();
                    assertEquals(maxGradNorm > 0.0, !Double.isNaN(fusedNorm));
                }
                finally
                {
                    TorchTesting.release(batch);
                }
                final double difference = TorchTesting.maxParameterDifference(actual, expected);
                worst = Math.max(worst, difference);
                if (1 == step)
                {
                    System.out.printf("fused %s vs libtorch: 1 step, relative difference %.3e%n", config, difference);
                    assertTrue(difference <= 1e-6, "one step: relative difference " + difference);
                }
            }
            System.out.printf("fused %s vs libtorch: 200 steps, worst relative difference %.3e%n", config, worst);
            assertTrue(worst <= 1e-4, "200 steps: relative difference " + worst);
            assertEquals(200, fused.stepCount());
            assertFalse(TorchTesting.maxParameterDifference(actual, untrained()) < 1e-3, "training moved weights");
        }
    }

    private static Mlp untrained;

    private static Mlp untrained()
    {
        if (null == untrained)
        {
            untrained = FlatParametersTest.seededMlp(11, NET);
        }
        return untrained;
    }

    static FusedOptimizer<?> fused(final FlatParameters flat, final Object config, final double maxGradNorm)
    {
        if (config instanceof AdamConfig adam)
        {
            return new FusedAdam(flat, adam, maxGradNorm);
        }
        return new FusedSgd(flat, (SgdConfig)config, maxGradNorm);
    }
}
