package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Test;

/**
 * Random calls into every fused native entry point ({@link FusedDqnUpdate}: create, bind, update, forward;
 * {@link FusedMlpStep}: create, bind, step; {@link FusedAdam} over the gradients they wrote): random layouts and batch
 * sizes, tensors of the wrong shape, dtype or layout, closed or resized after binding, bindings passed to another
 * update, actions outside the action count, NaN, inf and huge values. Each call must return or throw
 * {@link IllegalArgumentException}; anything else fails the test, and a write outside a buffer kills the JVM (under
 * {@code .ci/run}'s AddressSanitizer build, at the first byte). {@code -Dding4j.fuzz.calls=N} sets the number of
 * calls (default 3,000; the sanitizer run makes 10,000), {@code -Dding4j.fuzz.seed} the seed.
 */
class NativeFuzzTest
{
    private static final int CALLS = Integer.getInteger("ding4j.fuzz.calls", 3_000);
    private static final long SEED = Long.getLong("ding4j.fuzz.seed", 20261204L);

    private SplittableRandom random;
    private long calls;
    private long refused;

    @Test
    void everyFusedEntryPointShouldReturnOrRefuseWhateverItIsGiven() throws java.io.IOException
    {
        Threads.configure();
        if (null != System.getenv("DING4J_SANITIZER"))
        {
            // The sanitizer profile's run: a green result means something only if the runtime is really there.
            final String maps = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/maps"));
            assertTrue(maps.contains("libasan") && maps.contains("libubsan"), "DING4J_SANITIZER is set, but the "
                + "ASan and UBSan runtimes are not mapped into this JVM");
        }
        random = new SplittableRandom(SEED);
        int cases = 0;
        while (calls < CALLS)
        {
            final String what = "case " + cases + " (seed " + SEED + ")";
            try (PointerScope scope = new PointerScope())
            {
                if (random.nextInt(4) == 0)
                {
                    mlpCase(what);
                }
                else
                {
                    dqnCase(what);
                }
            }
            cases++;
        }
        System.out.println("NativeFuzzTest: " + calls + " calls in " + cases + " cases, " + refused + " refused");
        assertTrue(refused > calls / 20 && refused < calls, "the fuzz should mix refused and accepted calls: "
            + refused + " of " + calls);
    }

    /** Runs a call, counting it; an IllegalArgumentException is a refusal, anything else fails the test. */
    private <T> T call(final String what, final java.util.function.Supplier<T> body)
    {
        calls++;
        try
        {
            return body.get();
        }
        catch (final IllegalArgumentException refusal)
        {
            refused++;
            return null;
        }
        catch (final RuntimeException | Error e)
        {
            throw new AssertionError(what + ": expected a result or an IllegalArgumentException, got " + e, e);
        }
    }

    private void dqnCase(final String what)
    {
        final int layers = 1 + random.nextInt(3);
        final long[] hidden = new long[layers];
        for (int l = 0; l < layers; l++)
        {
            hidden[l] = 1 + random.nextInt(24);
        }
        final int obs = 1 + random.nextInt(8);
        final int actions = 1 + random.nextInt(6);
        final boolean dueling = random.nextBoolean();
        final Activation activation = random.nextBoolean() ? Activation.RELU : Activation.TANH;
        final int batch = 1 + random.nextInt(32);
        final List<long[]> shapes = dqnShapes(hidden, obs, actions, dueling);
        final FlatParameters online = flat(shapes);
        final FlatParameters target = flat(shapes);
        final long[] offsets = new long[shapes.size()];
        for (int i = 0; i < offsets.length; i++)
        {
            offsets[i] = online.offset(i);
        }
        // Now and then a layout that does not hold: it must be refused, and nothing else runs on it.
        final int corrupt = random.nextInt(10);
        final long[] givenOffsets = 0 == corrupt ? java.util.Arrays.copyOf(offsets, offsets.length - 1)
            : offsets.clone();
        if (1 == corrupt)
        {
            givenOffsets[random.nextInt(givenOffsets.length)] += online.numel() - 1;
        }
        final int givenBatch = 2 == corrupt ? -random.nextInt(2) : batch;
        final int givenActions = 3 == corrupt ? actions + 1 : actions;
        final FusedDqnUpdate update = call(what + " create", () -> new FusedDqnUpdate(online, target, hidden, obs,
            givenActions, dueling, activation, givenBatch, givenOffsets));
        if (null == update)
        {
            return;
        }
        final FusedAdam adam = new FusedAdam(online, AdamConfig.adam(1e-3), 10.0);
        try (update; adam)
        {
            final FusedDqnUpdate other = 0 == random.nextInt(4) ? new FusedDqnUpdate(online, target, hidden, obs,
                actions, dueling, activation, batch + 1 + random.nextInt(8), offsets) : null;
            try
            {
                for (int k = 0; k < 24; k++)
                {
                    dqnCall(what + " call " + k, update, other, online, batch, obs, actions, adam);
                }
            }
            finally
            {
                if (null != other)
                {
                    other.close();
                }
            }
        }
    }

    private void dqnCall(final String what, final FusedDqnUpdate update, final FusedDqnUpdate other,
        final FlatParameters online, final int batch, final int obs, final int actions, final FusedAdam adam)
    {
        if (random.nextInt(3) == 0)
        {
            final int rows = random.nextInt(batch + 3);
            final Tensor x = floats(new long[] {rows, bent(obs)}, 0.1);
            final Tensor q = floats(new long[] {bent(rows), bent(actions)}, 0.0);
            final FusedDqnUpdate.Forward f = call(what + " bindForward", () -> update.bindForward(online, x, q));
            if (null != f)
            {
                mutate(x, q);
                call(what + " qValues", () -> {
                    (null != other && random.nextBoolean() ? other : update).qValues(f);
                    return this;
                });
            }
            return;
        }
        final Tensor x = floats(new long[] {bent(batch), bent(obs)}, 0.1);
        final Tensor next = floats(new long[] {bent(batch), bent(obs)}, 0.1);
        final Tensor action = actions(bent(batch), actions);
        final Tensor ret = floats(new long[] {bent(batch)}, 0.1);
        final Tensor bootstrap = floats(new long[] {bent(batch)}, 0.05);
        final Tensor weight = floats(new long[] {bent(batch)}, 0.05);
        final Tensor td = floats(new long[] {bent(batch)}, 0.0);
        final FusedDqnUpdate.Batch b = call(what + " bind", () -> update.bind(x, next, action, ret, bootstrap,
            weight, td));
        if (null == b)
        {
            return;
        }
        mutate(x, next, action, ret, bootstrap, weight, td);
        final Object done = call(what + " update", () -> {
            (null != other && random.nextBoolean() ? other : update).update(b, random.nextBoolean());
            return this;
        });
        if (null != done)
        {
            call(what + " adam", () -> {
                adam.step();
                return this;
            });
        }
    }

    private void mlpCase(final String what)
    {
        final int layers = 1 + random.nextInt(3);
        final long[] sizes = new long[layers + 1];
        for (int l = 0; l <= layers; l++)
        {
            sizes[l] = 1 + random.nextInt(24);
        }
        final int batch = 1 + random.nextInt(32);
        final Activation activation = random.nextBoolean() ? Activation.RELU : Activation.TANH;
        final RegressionLoss loss = random.nextBoolean() ? RegressionLoss.MSE : RegressionLoss.HUBER;
        try (Mlp mlp = Mlp.of(activation, sizes); FlatParameters params = FlatParameters.of(mlp.module()))
        {
            final int givenBatch = random.nextInt(10) == 0 ? 0 : batch;
            final FusedMlpStep step = call(what + " create", () -> new FusedMlpStep(mlp, params, givenBatch, loss));
            if (null == step)
            {
                return;
            }
            try (step)
            {
                for (int k = 0; k < 24; k++)
                {
                    final Tensor x = floats(new long[] {bent(batch), bent(sizes[0])}, 0.1);
                    final Tensor y = floats(new long[] {bent(batch), bent(sizes[layers])}, 0.1);
                    final Tensor w = random.nextBoolean() ? null : floats(new long[] {bent(batch)}, 0.1);
                    final FusedMlpStep.Batch b = call(what + " bind " + k, () -> step.bind(x, y, w));
                    if (null != b)
                    {
                        mutate(x, y, w);
                        call(what + " step " + k, () -> step.step(b));
                    }
                }
            }
        }
    }

    private static List<long[]> dqnShapes(final long[] hidden, final int obs, final int actions,
        final boolean dueling)
    {
        final List<long[]> shapes = new ArrayList<>();
        long in = obs;
        for (final long h : hidden)
        {
            shapes.add(new long[] {h, in});
            shapes.add(new long[] {h});
            in = h;
        }
        final long h = hidden[hidden.length - 1];
        shapes.add(new long[] {h, h});
        shapes.add(new long[] {h});
        shapes.add(new long[] {actions, h});
        shapes.add(new long[] {actions});
        if (dueling)
        {
            shapes.add(new long[] {h, h});
            shapes.add(new long[] {h});
            shapes.add(new long[] {1, h});
            shapes.add(new long[] {1});
        }
        return shapes;
    }

    private FlatParameters flat(final List<long[]> shapes)
    {
        final List<String> names = new ArrayList<>();
        final List<Tensor> tensors = new ArrayList<>();
        for (int i = 0; i < shapes.size(); i++)
        {
            names.add("p" + i);
            tensors.add(torch.randn(shapes.get(i)));
        }
        return FlatParameters.of(names, tensors);
    }

    /** A size, most of the time; now and then one off by one (or zero). */
    private long bent(final long size)
    {
        final int roll = random.nextInt(40);
        return 0 == roll ? size + 1 : 1 == roll ? Math.max(0, size - 1) : size;
    }

    /**
     * A float32 tensor of random values (a fraction {@code special} of them NaN, +-inf or +-3e38); now and then
     * float64 or not contiguous instead.
     */
    private Tensor floats(final long[] shape, final double special)
    {
        final int roll = random.nextInt(40);
        if (0 == roll)
        {
            return torch.empty(shape, new TensorOptions(torch.ScalarType.Double), new MemoryFormatOptional());
        }
        final boolean strided = 1 == roll;
        final long[] base = strided ? (2 == shape.length ? new long[] {shape[1], shape[0]} : new long[] {shape[0], 2})
            : shape;
        final Tensor t = torch.empty(base, new TensorOptions(torch.ScalarType.Float), new MemoryFormatOptional());
        final float[] values = new float[(int)t.numel()];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = random.nextDouble() < special ? specialValue() : (float)random.nextGaussian();
        }
        if (values.length > 0)
        {
            new FloatPointer(t.data_ptr()).put(values);
        }
        return !strided ? t : 2 == shape.length ? t.t() : t.select(1, 0);
    }

    private float specialValue()
    {
        switch (random.nextInt(5))
        {
            case 0:
                return Float.NaN;
            case 1:
                return Float.POSITIVE_INFINITY;
            case 2:
                return Float.NEGATIVE_INFINITY;
            case 3:
                return 3e38f;
            default:
                return -1e20f;
        }
    }

    /** Actions mostly in range; some outside it (negative, the count, far beyond); now and then float32 instead. */
    private Tensor actions(final long size, final int count)
    {
        if (random.nextInt(40) == 0)
        {
            return floats(new long[] {size}, 0.0);
        }
        final Tensor t = torch.empty(new long[] {size}, new TensorOptions(torch.ScalarType.Long),
            new MemoryFormatOptional());
        final long[] values = new long[(int)size];
        final boolean outOfRange = random.nextInt(6) == 0;
        for (int i = 0; i < values.length; i++)
        {
            values[i] = random.nextInt(count);
        }
        if (outOfRange && size > 0)
        {
            final long[] bad = {-1, count, count + 1_000_000L, Long.MIN_VALUE, Long.MAX_VALUE};
            values[random.nextInt(values.length)] = bad[random.nextInt(bad.length)];
        }
        if (size > 0)
        {
            new LongPointer(t.data_ptr()).put(values);
        }
        return t;
    }

    /** Now and then closes or resizes one of the tensors after they were bound. */
    private void mutate(final Tensor... tensors)
    {
        final int roll = random.nextInt(30);
        final Tensor t = tensors[random.nextInt(tensors.length)];
        if (null == t || roll > 1)
        {
            return;
        }
        if (0 == roll)
        {
            t.close();
        }
        else
        {
            t.resize_(new long[] {t.numel() + 1 + random.nextInt(100)});
        }
    }
}
