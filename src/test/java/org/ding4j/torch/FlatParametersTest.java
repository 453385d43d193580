package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("native")
class FlatParametersTest
{
    @BeforeAll
    static void init()
    {
        TorchTesting.init();
    }

    @Test
    void shouldAccumulateGradientsIntoTheFlatBufferExactlyAsAnOrdinaryModule()
    {
        final Tensor[] batch = TorchTesting.batch(7, 16, 4, 2);
        torch.manual_seed(1);
        try (Mlp plain = Mlp.of(4, 32, 32, 2);
            Mlp flat = seededMlp(1, 4, 32, 32, 2);
            FlatParameters fp = FlatParameters.of(flat.module());
            PointerScope scope = new PointerScope())
        {
            assertEquals(plain.parameterCount(), fp.numel());
            assertEquals(plain.parameterNames(), fp.names());
            assertEquals(0.0, TorchTesting.maxParameterDifference(flat, plain), "flattening must keep the values");

            // Twice, so that accumulation (not only assignment) goes into the views.
            for (int k = 0; k < 2; k++)
            {
                TorchTesting.lossAndBackward(plain, batch);
                TorchTesting.lossAndBackward(flat, batch);
            }
            final TensorVector plainParams = plain.module().parameters();
            final TensorVector flatParams = flat.module().parameters();
            final Tensor grads = fp.group(0).grads();
            for (int i = 0; i < fp.size(); i++)
            {
                final Tensor expected = plainParams.get(i).grad();
                final Tensor inBuffer = grads.narrow(0, fp.offset(i), expected.numel()).view_as(expected);
                assertTrue(expected.equal(inBuffer), "gradient of " + fp.name(i) + " must land in the flat buffer");
                assertTrue(expected.equal(flatParams.get(i).grad()), fp.name(i));
            }
            final double expectedNorm = torch.clip_grad_norm_(plainParams, 1e30);
            assertEquals(expectedNorm, fp.gradNorm(), 1e-6 * expectedNorm);

            fp.zeroGrad();
            assertEquals(0.0, grads.abs().sum().item_double());
            TorchTesting.lossAndBackward(flat, batch);
            TorchTesting.lossAndBackward(plain, batch);
            plain.module().zero_grad(false);
            TorchTesting.lossAndBackward(plain, batch);
            assertTrue(plainParams.get(0).grad().equal(flatParams.get(0).grad()), "zeroGrad keeps the views alive");
        }
        finally
        {
            TorchTesting.release(batch);
        }
    }

    @Test
    void shouldSeeInPlaceUpdatesOfTheValueBufferInForward()
    {
        final Tensor[] batch = TorchTesting.batch(3, 8, 4, 2);
        try (Mlp mlp = seededMlp(2, 4, 8, 2);
            FlatParameters fp = FlatParameters.of(mlp.module());
            PointerScope scope = new PointerScope())
        {
            final Tensor before = mlp.forward(batch[0]).clone();
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                fp.group(0).values().zero_();
            }
            final Tensor after = mlp.forward(batch[0]);
            assertEquals(0.0, after.abs().sum().item_double(), "all-zero weights give zero output");
            assertTrue(before.abs().sum().item_double() > 0.0);
        }
        finally
        {
            TorchTesting.release(batch);
        }
    }

    @Test
    void shouldGroupParametersByDtype()
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor a = torch.randn(3, 2).requires_grad_(true);
            final Tensor b = torch.randn(5).to(torch.ScalarType.Double).requires_grad_(true);
            final Tensor c = torch.randn(4).requires_grad_(true);
            try (FlatParameters fp = FlatParameters.of(List.of("a", "b", "c"), List.of(a, b, c)))
            {
                assertEquals(2, fp.groupCount());
                assertEquals(10, fp.group(0).numel());
                assertEquals(5, fp.group(1).numel());
                assertEquals(6, fp.offset(2));
                assertTrue(fp.group(0).isCpuFloat32());
                assertTrue(!fp.group(1).isCpuFloat32());
                torch.sum(b.mul(b)).backward();
                assertEquals(2.0 * b.abs().sum().item_double(), fp.group(1).grads().abs().sum().item_double(), 1e-9);
            }
        }
    }

    @Test
    void shouldRejectBadParameters()
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor ints = torch.ones(3).to(torch.ScalarType.Long);
            final Tensor empty = torch.randn(0);
            final Tensor ok = torch.randn(2);
            assertMessage("expected a floating-point tensor, got Long",
                () -> FlatParameters.of(List.of("w"), List.of(ints)));
            assertMessage("parameter w: zero-length tensor", () -> FlatParameters.of(List.of("w"), List.of(empty)));
            assertMessage("expected at least one tensor", () -> FlatParameters.of(List.of(), List.of()));
            assertMessage("expected distinct names", () -> FlatParameters.of(List.of("w", "w"), List.of(ok, ok)));
            assertMessage("expected one per parameter", () -> FlatParameters.of(List.of("w"), List.of(ok, ok)));
        }
    }

    @Test
    void shouldLoadStateDictsByNameStrictlyOrReportingTheDifferences()
    {
        try (PointerScope scope = new PointerScope();
            Mlp source = seededMlp(1, 4, 8, 2);
            FlatParameters from = FlatParameters.of(source.module());
            Mlp target = seededMlp(2, 4, 8, 3);
            FlatParameters to = FlatParameters.of(target.module()))
        {
            final java.util.Map<String, Object> state = from.stateDict();
            assertEquals(List.of("0.weight", "0.bias", "2.weight", "2.bias"), List.copyOf(state.keySet()));
            state.put("extra", 1L);
            state.remove("0.bias");
            final Tensor before = to.group(0).values().clone();
            assertMessage("missing keys [0.bias], unexpected keys [extra], mismatched [2.weight: checkpoint has shape "
                + "[2, 8], the model [3, 8], 2.bias: checkpoint has shape [2], the model [3]]",
                () -> to.loadStateDict(state, true));
            assertTrue(before.equal(to.group(0).values()), "a failed strict load changes nothing");
            final StateDictReport report = to.loadStateDict(state, false);
            assertEquals(List.of("0.bias"), report.missing());
            assertEquals(List.of("extra"), report.unexpected());
            assertEquals(2, report.mismatched().size());
            assertTrue(to.view(0).equal(from.view(0)), "the matching key loads");
            assertTrue(before.narrow(0, to.offset(1), 8).equal(to.view(1)), "the missing one keeps its values");
        }
    }

    static Mlp seededMlp(final long seed, final long... sizes)
    {
        torch.manual_seed(seed);
        return Mlp.of(sizes);
    }

    static void assertMessage(final String expected, final org.junit.jupiter.api.function.Executable call)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().contains(expected), () -> "message \"" + ex.getMessage() + "\" lacks " + expected);
    }
}
