package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packed small-batch forward against a double-precision forward of the same weights, for every SIMD variant this
 * CPU runs (an AVX-512 machine checks all three; an AVX2 one two): a plain MLP with each activation, a dueling head,
 * batch 1 and several rows, widths that are and are not multiples of the 16-float padding; bad plans refused by name.
 */
class PackedMlpTest
{
    @BeforeAll
    static void threads()
    {
        Threads.configure();
    }

    @Test
    void everyVariantShouldComputeTheForwardOfTheFlatWeights()
    {
        final int[] widths = {3, 64, 64, 1, 6, 128, 128, 3, 5, 200, 17, 40};
        for (final int act : new int[] {PackedMlp.RELU, PackedMlp.TANH})
        {
            for (int at = 0; at < widths.length; at += 4)
            {
                final int obs = widths[at];
                final List<PackedMlp.Layer> layers = new ArrayList<>();
                long offset = 0;
                for (int l = 0; l < 3; l++)
                {
                    final int in = widths[at + l];
                    final int out = widths[at + l + 1];
                    layers.add(new PackedMlp.Layer(offset, offset + (long)in * out, in, out,
                        2 == l ? PackedMlp.IDENTITY : act, l - 1));
                    offset += (long)in * out + out;
                }
                check(new PackedMlp(layers, false), offset, obs);
            }
        }
    }

    @Test
    void aDuelingHeadShouldGiveVPlusTheCentredAdvantages()
    {
        // trunk 6-128, A: 128-128-3, V: 128-128-1, as ServingActor lays out a dueling Q-net.
        final int[][] shapes = {{6, 128, -1}, {128, 128, 0}, {128, 3, 1}, {128, 128, 0}, {128, 1, 3}};
        final List<PackedMlp.Layer> layers = new ArrayList<>();
        long offset = 0;
        for (int l = 0; l < shapes.length; l++)
        {
            final int in = shapes[l][0];
            final int out = shapes[l][1];
            layers.add(new PackedMlp.Layer(offset, offset + (long)in * out, in, out,
                1 == out || 3 == out ? PackedMlp.IDENTITY : PackedMlp.RELU, shapes[l][2]));
            offset += (long)in * out + out;
        }
        check(new PackedMlp(layers, true), offset, 6);
    }

    private static void check(final PackedMlp plan, final long parameters, final int obsWidth)
    {
        final SplittableRandom random = new SplittableRandom(parameters);
        final float[] values = new float[(int)parameters];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = (float)(random.nextGaussian() * 0.2);
        }
        final Tensor tensor = torch.zeros(parameters);
        try (FlatParameters params = FlatParameters.of(List.of("w"), List.of(tensor)))
        {
            new org.bytedeco.javacpp.FloatPointer(params.group(0).values().data_ptr()).put(values);
            final NativeFloats packed = new NativeFloats(plan.packedFloats());
            plan.pack(params, packed);
            for (final int rows : new int[] {1, 5})
            {
                final float[] obs = new float[rows * obsWidth];
                for (int i = 0; i < obs.length; i++)
                {
                    obs[i] = (float)random.nextGaussian();
                }
                final double[] expected = reference(plan, values, obs, rows);
                for (int variant = PackedMlp.PLAIN; variant <= PackedMlp.AVX512; variant++)
                {
                    if (!PackedMlp.supports(variant))
                    {
                        continue;
                    }
                    final float[] out = new float[rows * plan.outputWidth()];
                    plan.forward(packed, obs, rows, out, plan.newScratch(1), variant);
                    for (int k = 0; k < out.length; k++)
                    {
                        // float32 sums of a few hundred terms of size ~1: far inside 1e-3, far outside a wrong
                        // weight, a missed row or a shifted output (each of which moves an output by ~0.1).
                        assertEquals(expected[k], out[k], 1e-3 * (1 + Math.abs(expected[k])),
                            "variant " + variant + ", rows " + rows + ", output " + k);
                    }
                }
            }
        }
        finally
        {
            tensor.close();
        }
    }

    /** The plan's forward in double, from the flat weights in PyTorch's layout. */
    private static double[] reference(final PackedMlp plan, final float[] p, final float[] obs, final int rows)
    {
        final List<PackedMlp.Layer> layers = plan.layers();
        final boolean dueling = plan.dueling();
        final double[] result = new double[rows * plan.outputWidth()];
        for (int r = 0; r < rows; r++)
        {
            final double[][] outs = new double[layers.size()][];
            for (int l = 0; l < layers.size(); l++)
            {
                final PackedMlp.Layer layer = layers.get(l);
                final double[] y = new double[layer.out()];
                for (int o = 0; o < layer.out(); o++)
                {
                    double s = p[(int)layer.bias() + o];
                    for (int i = 0; i < layer.in(); i++)
                    {
                        final double x = layer.source() < 0 ? obs[r * layer.in() + i] : outs[layer.source()][i];
                        s += p[(int)layer.weight() + o * layer.in() + i] * x;
                    }
                    y[o] = PackedMlp.RELU == layer.activation() ? Math.max(0, s)
                        : PackedMlp.TANH == layer.activation() ? Math.tanh(s) : s;
                }
                outs[l] = y;
            }
            final double[] a = outs[dueling ? layers.size() - 3 : layers.size() - 1];
            double mean = 0;
            for (final double v : a)
            {
                mean += v / a.length;
            }
            for (int k = 0; k < a.length; k++)
            {
                result[r * a.length + k] = dueling ? outs[layers.size() - 1][0] + a[k] - mean : a[k];
            }
        }
        return result;
    }

    @Test
    void aBadPlanShouldBeRefusedNamingTheLayerAndTheRule()
    {
        final PackedMlp.Layer first = new PackedMlp.Layer(0, 12, 3, 4, PackedMlp.RELU, -1);
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> new PackedMlp(List.of(first, new PackedMlp.Layer(16, 32, 4, 4, PackedMlp.RELU, 1)), false));
        assertTrue(ex.getMessage().startsWith("layers[1].source: expected -1 (the observation) or an earlier layer"),
            ex.getMessage());
        ex = assertThrows(IllegalArgumentException.class,
            () -> new PackedMlp(List.of(first, new PackedMlp.Layer(16, 36, 5, 4, PackedMlp.RELU, 0)), false));
        assertEquals("layers[1].in: expected 4 (the width of what it reads), got 5", ex.getMessage());
        ex = assertThrows(IllegalArgumentException.class,
            () -> new PackedMlp(List.of(first, new PackedMlp.Layer(16, 32, 4, 4, 7, 0)), false));
        assertTrue(ex.getMessage().startsWith("layers[1].activation: expected 0 (identity), 1 (relu) or 2 (tanh), "
            + "got 7"), ex.getMessage());
        ex = assertThrows(IllegalArgumentException.class, () -> new PackedMlp(List.of(first,
            new PackedMlp.Layer(16, 32, 4, 4, 0, 0), new PackedMlp.Layer(36, 52, 4, 2, 0, 0)), true));
        assertEquals("layers[2].out: a dueling head's V has one output, got 2", ex.getMessage());
        ex = assertThrows(IllegalArgumentException.class, () -> new PackedMlp(List.of(
            new PackedMlp.Layer(0, 0, 65536, 65536, PackedMlp.RELU, -1)), false));
        assertTrue(ex.getMessage().startsWith("layers[0]: expected the packed weights within "), ex.getMessage());
        final PackedMlp plan = new PackedMlp(List.of(first), false);
        final Tensor small = torch.zeros(10);
        try (FlatParameters params = FlatParameters.of(List.of("w"), List.of(small)))
        {
            ex = assertThrows(IllegalArgumentException.class, () -> plan.pack(params, new NativeFloats(1024)));
            assertEquals("source: expected one CPU float32 group of at least 16 floats, got 1 group(s) of 10 floats",
                ex.getMessage());
        }
        finally
        {
            small.close();
        }
        ex = assertThrows(IllegalArgumentException.class, () -> plan.forward(new NativeFloats(4), new float[3], 1,
            new float[4], plan.newScratch(1)));
        assertEquals("packed: expected at least " + plan.packedFloats() + " floats, got 4", ex.getMessage());
        ex = assertThrows(IllegalArgumentException.class, () -> plan.forward(new NativeFloats(plan.packedFloats()),
            new float[2], 1, new float[4], plan.newScratch(1)));
        assertEquals("obs, out: expected 1 rows of 3 and 4 floats, got 2 and 4 floats", ex.getMessage());
        final PackedMlp other = new PackedMlp(List.of(first), false);
        ex = assertThrows(IllegalArgumentException.class, () -> plan.forward(new NativeFloats(plan.packedFloats()),
            new float[3], 1, new float[4], other.newScratch(1)));
        assertEquals("scratch: made by another plan (newScratch of this one)", ex.getMessage());
    }
}
