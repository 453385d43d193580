package org.ding4j.torch;

import static org.ding4j.torch.FlatParametersTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Export and import of fused optimizer state in PyTorch's state_dict layout. */
@Tag("native")
class OptimizerStateTest
{
    private static final long[] NET = {4, 16, 2};

    @BeforeAll
    static void init()
    {
        TorchTesting.init();
    }

    @Test
    void shouldExportAdamMomentsPerParameterInPyTorchLayout()
    {
        final Tensor[] batch = TorchTesting.batch(5, 8, 4, 2);
        try (Mlp mlp = FlatParametersTest.seededMlp(3, NET);
            FlatParameters flat = FlatParameters.of(mlp.module());
            FusedAdam adam = new FusedAdam(flat, AdamConfig.adam(1e-3));
            PointerScope scope = new PointerScope())
        {
            assertEquals(Map.of(), adam.stateDict().get("state"), "no state before the first step, as PyTorch");
            TorchTesting.lossAndBackward(mlp, batch);
            adam.step();
            final Map<String, Object> dict = adam.stateDict();
            final Map<?, ?> state = (Map<?, ?>)dict.get("state");
            assertEquals(flat.size(), state.size());
            final List<?> groups = (List<?>)dict.get("param_groups");
            final Map<?, ?> group = (Map<?, ?>)groups.get(0);
            assertEquals(List.of(0L, 1L, 2L, 3L), group.get("params"));
            assertEquals(List.of(0.9, 0.999), group.get("betas"));
            assertEquals(1e-3, group.get("lr"));
            assertEquals(false, group.get("amsgrad"));

            for (int i = 0; i < flat.size(); i++)
            {
                final Map<?, ?> entry = (Map<?, ?>)state.get((long)i);
                assertEquals(1L, entry.get("step"));
                final Tensor grad = mlp.module().parameters().get(i).grad();
                final Tensor expAvg = (Tensor)entry.get("exp_avg");
                final Tensor expAvgSq = (Tensor)entry.get("exp_avg_sq");
                assertEquals(List.of(flat.shape(i).length), List.of((int)expAvg.dim()));
                // After one step: exp_avg = (1 - beta1) g, exp_avg_sq = (1 - beta2) g^2.
                assertTrue(expAvg.allclose(grad.mul(new org.bytedeco.pytorch.Scalar(0.1)), 1e-6, 1e-12, false),
                    flat.name(i));
                assertTrue(expAvgSq.allclose(grad.mul(grad).mul(new org.bytedeco.pytorch.Scalar(0.001)), 1e-5,
                    1e-15, false), flat.name(i));
                assertTrue(!entry.containsKey("max_exp_avg_sq"));
            }
        }
        finally
        {
            TorchTesting.release(batch);
        }
    }

    /** @return a copy of an optimizer's state dict whose one moment is filled with one value */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> withMoment(final Map<String, Object> dict, final long parameter,
        final String moment, final double value)
    {
        final Map<Object, Object> state = new java.util.LinkedHashMap<>((Map<Object, Object>)dict.get("state"));
        final Map<Object, Object> entry = new java.util.LinkedHashMap<>((Map<Object, Object>)state.get(parameter));
        entry.put(moment, torch.full_like((Tensor)entry.get(moment), new org.bytedeco.pytorch.Scalar(value)));
        state.put(parameter, entry);
        final Map<String, Object> copy = new java.util.LinkedHashMap<>(dict);
        copy.put("state", state);
        return copy;
    }

    @Test
    void shouldResumeBitIdenticallyFromAnExportedState()
    {
        for (final Object config : List.of(AdamConfig.adamW(1e-2).withAmsgrad(true), SgdConfig.sgd(0.05, 0.9)))
        {
            try (Mlp straight = FlatParametersTest.seededMlp(9, NET);
                FlatParameters straightFlat = FlatParameters.of(straight.module());
                FusedOptimizer<?> straightOpt = FusedOptimizerTest.fused(straightFlat, config, 1.0);
                Mlp resumed = FlatParametersTest.seededMlp(77, NET);
                FlatParameters resumedFlat = FlatParameters.of(resumed.module());
                FusedOptimizer<?> resumedOpt = FusedOptimizerTest.fused(resumedFlat, config, 1.0);
                PointerScope scope = new PointerScope())
            {
                for (int step = 0; step < 10; step++)
                {
                    train(straight, straightFlat, straightOpt, step);
                }
                // Resume: weights and optimizer state from the straight run into a differently initialised net.
                try (NoGradGuard noGrad = new NoGradGuard())
                {
                    resumedFlat.group(0).values().copy_(straightFlat.group(0).values());
                }
                resumedOpt.loadStateDict(straightOpt.stateDict());
                assertEquals(10, resumedOpt.stepCount());
                for (int step = 10; step < 20; step++)
                {
                    train(straight, straightFlat, straightOpt, step);
                    train(resumed, resumedFlat, resumedOpt, step);
                }
                assertTrue(straightFlat.group(0).values().equal(resumedFlat.group(0).values()),
                    "resumed training must be bit-identical for " + config);
            }
        }
    }

    @Test
    void shouldRejectAStateThatDoesNotFitAndKeepTheCurrentOne()
    {
        final Tensor[] batch = TorchTesting.batch(5, 8, 4, 2);
        try (Mlp mlp = FlatParametersTest.seededMlp(3, NET);
            FlatParameters flat = FlatParameters.of(mlp.module());
            FusedAdam adam = new FusedAdam(flat, AdamConfig.adam(1e-3));
            PointerScope scope = new PointerScope())
        {
            TorchTesting.lossAndBackward(mlp, batch);
            adam.step();
            final Map<String, Object> good = adam.stateDict();
            // Moments a diverged run left.
            assertMessage("state.1.exp_avg: has non-finite values (NaN or infinity); a diverged optimizer is not "
                + "loaded", () -> adam.loadStateDict(withMoment(good, 1L, "exp_avg", Double.NaN)));
            assertMessage("state.0.exp_avg_sq: expected values >= 0 (a second moment), got -1.0",
                () -> adam.loadStateDict(withMoment(good, 0L, "exp_avg_sq", -1.0)));

            final Map<String, Object> wrongShape = adam.stateDict();
            entry(wrongShape, 2).put("exp_avg", torch.zeros(3, 3));
            assertMessage("state.2.exp_avg: expected shape [2, 16] for parameter 2.weight, got [3, 3]",
                () -> adam.loadStateDict(wrongShape));

            final Map<String, Object> mixedSteps = adam.stateDict();
            entry(mixedSteps, 3).put("step", 4L);
            assertMessage("state.3.step: expected the same step for every parameter", () -> adam.loadStateDict(mixedSteps));

            final Map<String, Object> badStep = adam.stateDict();
            entry(badStep, 0).put("step", 1.5);
            assertMessage("state.0.step: expected a whole number >= 1, got 1.5", () -> adam.loadStateDict(badStep));

            final Map<String, Object> missing = adam.stateDict();
            ((Map<?, ?>)missing.get("state")).remove(1L);
            assertMessage("state.1: missing state for parameter 0.bias", () -> adam.loadStateDict(missing));

            final Map<String, Object> badLr = adam.stateDict();
            group(badLr).put("lr", Double.NaN);
            assertMessage("lr: expected a finite number >= 0, got NaN", () -> adam.loadStateDict(badLr));

            final Map<String, Object> badBetas = adam.stateDict();
            group(badBetas).put("betas", List.of(-0.1, 0.999));
            assertMessage("beta1: expected a number in [0, 1), got -0.1", () -> adam.loadStateDict(badBetas));

            final Map<String, Object> tooFew = adam.stateDict();
            group(tooFew).put("params", List.of(0L));
            assertMessage("param_groups.0.params: expected 4 parameter indices", () -> adam.loadStateDict(tooFew));

            assertEquals(1, adam.stepCount(), "a rejected state changes nothing");
            adam.loadStateDict(good);
            assertEquals(1, adam.stepCount());
        }
        finally
        {
            TorchTesting.release(batch);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> entry(final Map<String, Object> dict, final long index)
    {
        return (Map<String, Object>)((Map<?, ?>)dict.get("state")).get(index);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> group(final Map<String, Object> dict)
    {
        return (Map<String, Object>)((List<?>)dict.get("param_groups")).get(0);
    }

    private static void train(final Mlp mlp, final FlatParameters flat, final FusedOptimizer<?> opt, final int step)
    {
        final Tensor[] batch = TorchTesting.batch(500 + step, 16, NET[0], NET[NET.length - 1]);
        try
        {
            flat.zeroGrad();
            TorchTesting.lossAndBackward(mlp, batch);
            opt.step();
        }
        finally
        {
            TorchTesting.release(batch);
        }
    }
}
