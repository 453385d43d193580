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
 * {@link FusedMlpStep}: create, bind, step; {@link FusedAdam} and {@link FusedSgd} over the gradients they wrote;
 * {@link FusedActorCritic} (TD3 and SAC, on one thread or two): create, bind, update; {@link FusedPpo}: create, bind,
 * update, gradients, GAE; {@link PackedMlp}: plan, pack, forward on each variant): random layouts and batch sizes,
 * tensors of the wrong shape, dtype or layout, closed or resized after binding, bindings passed to another update,
 * actions and minibatch orders outside their range, NaN, inf and huge values. Each call must return or throw
 * {@link IllegalArgumentException}; anything else fails the test, and a write outside a buffer kills the JVM (under
 * {@code .ci/run}'s AddressSanitizer build, at the first byte). {@code -Dding4j.fuzz.calls=N} sets the number of
 * calls (default 3,000; the sanitizer run makes 10,000), {@code -Dding4j.fuzz.seed} the seed.
 */
class NativeFuzzTest
{
    private static final int CALLS = Integer.getInteger("ding4j.fuzz.calls", 3_000);
    private static final long SEED = Long.getLong("ding4j.fuzz.seed", 20261204L);

    private static final String[] KINDS = {"mlp", "dqn", "actor-critic", "ppo", "packed"};

    private SplittableRandom random;
    private long calls;
    private long refused;
    /** Which of {@link #KINDS} the current case is, and each one's calls and refusals (each must see both). */
    private int kind;
    private final long[] callsOf = new long[KINDS.length];
    private final long[] refusedOf = new long[KINDS.length];

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
                final int roll = random.nextInt(10);
                kind = roll < 1 ? 0 : roll < 4 ? 1 : roll < 7 ? 2 : roll < 9 ? 3 : 4;
                switch (kind)
                {
                    case 0 -> mlpCase(what);
                    case 1 -> dqnCase(what);
                    case 2 -> actorCriticCase(what);
                    case 3 -> ppoCase(what);
                    default -> packedCase(what);
                }
            }
            cases++;
        }
        final StringBuilder each = new StringBuilder();
        for (int k = 0; k < KINDS.length; k++)
        {
            each.append(", ").append(KINDS[k]).append(' ').append(callsOf[k]).append(" (").append(refusedOf[k])
                .append(" refused)");
            // A few calls (-Dding4j.fuzz.calls=20) need not reach every kind both ways.
            assertTrue(callsOf[k] < 50 || refusedOf[k] > 0 && refusedOf[k] < callsOf[k], "the " + KINDS[k]
                + " calls should mix refused and accepted ones: " + refusedOf[k] + " of " + callsOf[k]);
        }
        System.out.println("NativeFuzzTest: " + calls + " calls in " + cases + " cases, " + refused + " refused"
            + each);
        assertTrue(refused > calls / 20 && refused < calls, "the fuzz should mix refused and accepted calls: "
            + refused + " of " + calls);
    }

    /** Runs a call, counting it; an IllegalArgumentException is a refusal, anything else fails the test. */
    private <T> T call(final String what, final java.util.function.Supplier<T> body)
    {
        calls++;
        callsOf[kind]++;
        try
        {
            return body.get();
        }
        catch (final IllegalArgumentException refusal)
        {
            refused++;
            refusedOf[kind]++;
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
        final FusedOptimizer<?> adam = random.nextBoolean() ? new FusedAdam(online, AdamConfig.adam(1e-3), 10.0)
            : new FusedSgd(online, SgdConfig.sgd(1e-3, random.nextBoolean() ? 0.9 : 0.0),
                random.nextBoolean() ? 1.0 : 0.0);
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
        final FlatParameters online, final int batch, final int obs, final int actions, final FusedOptimizer<?> adam)
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

    private void actorCriticCase(final String what)
    {
        final boolean sac = random.nextBoolean();
        final int obs = 1 + random.nextInt(8);
        final int act = 1 + random.nextInt(4);
        final int batch = 1 + random.nextInt(24);
        final long[] as = widths(obs, (sac ? 2 : 1) * act);
        final long[] cs = widths(obs + act, 1);
        // Now and then a layout that does not hold: it must be refused.
        final int corrupt = random.nextInt(12);
        final long[] givenAs = as.clone();
        final long[] givenCs = cs.clone();
        if (0 == corrupt)
        {
            givenAs[givenAs.length - 1] += 1;
        }
        else if (1 == corrupt)
        {
            givenCs[0] -= 1;
        }
        final int givenBatch = 2 == corrupt ? 0 : batch;
        final FusedActorCritic.Layout layout = new FusedActorCritic.Layout(sac ? FusedActorCritic.Kind.SAC
            : FusedActorCritic.Kind.TD3, givenBatch, obs, act, givenAs, givenCs, 3 == corrupt ? 1.5 : 0.99,
            4 == corrupt ? -0.1 : 0.005, -act);
        final List<AutoCloseable> owned = new ArrayList<>();
        try
        {
            final FlatParameters actor = own(owned, mlpParams(List.of(""), as));
            final FlatParameters actorTarget = sac == (5 != corrupt) ? null : own(owned, mlpParams(List.of(""), as));
            final FlatParameters critic = own(owned, mlpParams(List.of("q1.", "q2."), cs));
            final FlatParameters criticTarget = own(owned, mlpParams(List.of("q1.", "q2."), cs));
            final FlatParameters logAlpha = sac ? own(owned, FlatParameters.of(List.of("log_alpha"),
                List.of(torch.zeros(1)))) : null;
            final FusedAdam actorAdam = own(owned, new FusedAdam(actor, AdamConfig.adam(1e-3)));
            final FusedAdam criticAdam = own(owned, new FusedAdam(critic, AdamConfig.adam(1e-3),
                6 == corrupt ? 1.0 : 0.0));
            final FusedAdam alphaAdam = sac && random.nextBoolean() ? own(owned, new FusedAdam(logAlpha,
                AdamConfig.adam(1e-3))) : null;
            final FusedActorCritic update = call(what + " create", () -> new FusedActorCritic(layout, actor,
                actorTarget, actorAdam, critic, criticTarget, criticAdam, logAlpha, alphaAdam));
            if (null == update)
            {
                return;
            }
            owned.add(update);
            // Both cores now and then: the twin critics' halves on a helper thread.
            update.threads(1 + random.nextInt(2));
            FusedActorCritic.Batch previous = null;
            for (int k = 0; k < 16; k++)
            {
                final Tensor x = floats(new long[] {bent(batch), bent(obs)}, 0.05);
                final Tensor action = floats(new long[] {bent(batch), bent(act)}, 0.05);
                final Tensor reward = floats(new long[] {bent(batch)}, 0.05);
                final Tensor next = floats(new long[] {bent(batch), bent(obs)}, 0.05);
                final Tensor notDone = floats(new long[] {bent(batch)}, 0.0);
                final Tensor noise = floats(new long[] {bent(batch), bent(act)}, 0.05);
                final Tensor noise2 = sac == (0 != random.nextInt(30)) ? floats(new long[] {bent(batch), bent(act)},
                    0.05) : null;
                final FusedActorCritic.Batch b = call(what + " bind " + k, () -> update.bind(x, action, reward, next,
                    notDone, noise, noise2));
                if (null == b)
                {
                    continue;
                }
                mutate(x, action, reward, next, notDone, noise, noise2);
                // Now and then the batch of an earlier call, whose tensors may be gone.
                final FusedActorCritic.Batch given = null != previous && 0 == random.nextInt(6) ? previous : b;
                call(what + " update " + k, () -> {
                    update.update(given, random.nextBoolean());
                    return update.criticLoss() + update.actorLoss() + update.alpha();
                });
                previous = b;
            }
        }
        finally
        {
            closeAll(owned);
        }
    }

    private void ppoCase(final String what)
    {
        final boolean discrete = random.nextBoolean();
        final int obs = 1 + random.nextInt(8);
        final int actions = 1 + random.nextInt(5);
        final int minibatch = 1 + random.nextInt(16);
        final long[] as = widths(obs, actions);
        final long[] cs = widths(obs, 1);
        final int corrupt = random.nextInt(12);
        final FusedPpo.Layout layout = new FusedPpo.Layout(discrete, 0 == corrupt ? 0 : minibatch, obs,
            1 == corrupt ? actions + 1 : actions, as, cs);
        final FusedPpo.Loss loss = new FusedPpo.Loss(2 == corrupt ? 1.5 : 0.2, random.nextBoolean(), 0.5,
            3 == corrupt ? -0.01 : 0.01, random.nextBoolean());
        final List<AutoCloseable> owned = new ArrayList<>();
        try
        {
            final List<String> names = new ArrayList<>();
            final List<Tensor> tensors = new ArrayList<>();
            mlpLayers("actor.", as, names, tensors);
            mlpLayers("critic.", cs, names, tensors);
            if (!discrete || 4 == corrupt)
            {
                names.add("log_std");
                tensors.add(torch.zeros(actions));
            }
            final FlatParameters params = own(owned, FlatParameters.of(names, tensors));
            final FusedAdam adam = own(owned, new FusedAdam(params, AdamConfig.adam(1e-3),
                random.nextBoolean() ? 0.5 : 0.0));
            final FusedPpo update = call(what + " create", () -> new FusedPpo(layout, loss, params, adam));
            if (null == update)
            {
                return;
            }
            owned.add(update);
            update.threads(1 + random.nextInt(2));
            for (int k = 0; k < 16; k++)
            {
                if (0 == random.nextInt(4))
                {
                    gaeCall(what + " gae " + k);
                }
                final int rows = minibatch * (1 + random.nextInt(3)) + (0 == random.nextInt(20) ? 1 : 0);
                final Tensor x = floats(new long[] {rows, bent(obs)}, 0.05);
                final Tensor taken = discrete ? indices(bent(rows), actions)
                    : floats(new long[] {bent(rows), bent(actions)}, 0.05);
                final Tensor logProbs = floats(new long[] {bent(rows)}, 0.05);
                final Tensor values = floats(new long[] {bent(rows)}, 0.05);
                final Tensor advantages = floats(new long[] {bent(rows)}, 0.05);
                final Tensor returns = floats(new long[] {bent(rows)}, 0.05);
                final FusedPpo.Data data = call(what + " bind " + k, () -> update.bind(x, taken, logProbs, values,
                    advantages, returns));
                if (null == data)
                {
                    continue;
                }
                mutate(x, taken, logProbs, values, advantages, returns);
                final int[] order = order(rows, minibatch);
                if (random.nextInt(4) == 0)
                {
                    call(what + " gradients " + k, () -> {
                        update.gradients(data, java.util.Arrays.copyOf(order, Math.min(order.length, minibatch)));
                        return this;
                    });
                }
                else if (null != call(what + " update " + k, () -> {
                    update.update(data, order);
                    return this;
                }))
                {
                    update.stat(random.nextInt(order.length / minibatch), FusedPpo.Stat.TOTAL_LOSS);
                }
            }
        }
        finally
        {
            closeAll(owned);
        }
    }

    private void packedCase(final String what)
    {
        final int obs = 1 + random.nextInt(8);
        final int hidden = 1 + random.nextInt(3);
        final boolean dueling = random.nextBoolean();
        final List<PackedMlp.Layer> layers = new ArrayList<>();
        long at = 0;
        int in = obs;
        for (int l = 0; l < hidden; l++)
        {
            final int out = 1 + random.nextInt(40);
            layers.add(new PackedMlp.Layer(at, at + (long)in * out, in, out, PackedMlp.RELU, l - 1));
            at += (long)(in + 1) * out;
            in = out;
        }
        final int trunk = hidden - 1;
        final int actions = 1 + random.nextInt(5);
        layers.add(new PackedMlp.Layer(at, at + (long)in * actions, in, actions, PackedMlp.IDENTITY, trunk));
        at += (long)(in + 1) * actions;
        if (dueling)
        {
            layers.add(new PackedMlp.Layer(at, at + (long)in * in, in, in, PackedMlp.TANH, trunk));
            at += (long)(in + 1) * in;
            layers.add(new PackedMlp.Layer(at, at + in, in, 1, PackedMlp.IDENTITY, layers.size() - 1));
            at += in + 1;
        }
        // Now and then a plan that does not hold: a source ahead of its layer, a width that does not follow, a
        // negative offset or an unknown activation.
        final int corrupt = random.nextInt(10);
        if (corrupt < 4)
        {
            final int l = random.nextInt(layers.size());
            final PackedMlp.Layer o = layers.get(l);
            layers.set(l, switch (corrupt)
            {
                case 0 -> new PackedMlp.Layer(o.weight(), o.bias(), o.in(), o.out(), o.activation(), l);
                case 1 -> new PackedMlp.Layer(o.weight(), o.bias(), o.in() + 1, o.out(), o.activation(), o.source());
                case 2 -> new PackedMlp.Layer(-1, o.bias(), o.in(), o.out(), o.activation(), o.source());
                default -> new PackedMlp.Layer(o.weight(), o.bias(), o.in(), o.out(), 3, o.source());
            });
        }
        final PackedMlp plan = call(what + " plan", () -> new PackedMlp(layers, dueling));
        if (null == plan)
        {
            return;
        }
        // Parameters a float short now and then: pack must refuse them.
        final long floats = 0 == random.nextInt(10) ? at - 1 : at;
        try (FlatParameters params = FlatParameters.of(List.of("w"), List.of(torch.randn(Math.max(1, floats)))))
        {
            final NativeFloats packed = new NativeFloats(0 == random.nextInt(10) ? plan.packedFloats() - 1
                : plan.packedFloats());
            if (null == call(what + " pack", () -> {
                plan.pack(params, packed);
                return this;
            }))
            {
                return;
            }
            final PackedMlp.Scratch scratch = (0 == random.nextInt(20) ? new PackedMlp(layers, dueling) : plan)
                .newScratch(1 + random.nextInt(4));
            for (int k = 0; k < 24; k++)
            {
                final int rows = random.nextInt(6);
                final float[] x = new float[(int)bent((long)rows * obs)];
                for (int i = 0; i < x.length; i++)
                {
                    x[i] = random.nextInt(20) == 0 ? specialValue() : (float)random.nextGaussian();
                }
                final float[] out = new float[(int)bent((long)rows * plan.outputWidth())];
                final int variant = random.nextInt(5) - 1;
                call(what + " forward " + k, () -> {
                    plan.forward(packed, x, rows, out, scratch, variant);
                    return this;
                });
            }
        }
    }

    /** GAE over a random rollout: arrays a row short now and then, NaN and infinite rewards, gamma out of range. */
    private void gaeCall(final String what)
    {
        final int steps = random.nextInt(6);
        final int envs = 1 + random.nextInt(4);
        final int rows = steps * envs;
        final float[] rewards = new float[(int)bent(rows)];
        final float[] values = new float[(int)bent(rows)];
        final byte[] flags = new byte[(int)bent(rows)];
        for (int i = 0; i < rewards.length; i++)
        {
            rewards[i] = random.nextInt(20) == 0 ? specialValue() : (float)random.nextGaussian();
        }
        for (int i = 0; i < flags.length; i++)
        {
            flags[i] = (byte)random.nextInt(4);
        }
        final float[] truncValues = new float[(int)bent(rows)];
        final float[] lastValues = new float[(int)bent(envs)];
        final float[] advantages = new float[(int)bent(rows)];
        final float[] returns = new float[(int)bent(rows)];
        final double gamma = random.nextInt(20) == 0 ? 1.5 : 0.99;
        call(what, () -> {
            FusedPpo.gae(steps, envs, rewards, values, flags, truncValues, lastValues, gamma, 0.95, advantages,
                returns);
            return this;
        });
    }

    /** Widths from {@code in} through one or two hidden layers to {@code out}. */
    private long[] widths(final long in, final long out)
    {
        final int hidden = 1 + random.nextInt(2);
        final long[] sizes = new long[hidden + 2];
        sizes[0] = in;
        for (int l = 1; l <= hidden; l++)
        {
            sizes[l] = 1 + random.nextInt(24);
        }
        sizes[hidden + 1] = out;
        return sizes;
    }

    /** One MLP's parameters in {@code Mlp}'s names ({@code PREFIX0.weight}, ...) per prefix, in one flat set. */
    private FlatParameters mlpParams(final List<String> prefixes, final long[] sizes)
    {
        final List<String> names = new ArrayList<>();
        final List<Tensor> tensors = new ArrayList<>();
        for (final String prefix : prefixes)
        {
            mlpLayers(prefix, sizes, names, tensors);
        }
        return FlatParameters.of(names, tensors);
    }

    private static void mlpLayers(final String prefix, final long[] sizes, final List<String> names,
        final List<Tensor> tensors)
    {
        for (int l = 0; l + 1 < sizes.length; l++)
        {
            names.add(prefix + 2 * l + ".weight");
            tensors.add(torch.randn(sizes[l + 1], sizes[l]).mul_(new org.bytedeco.pytorch.Scalar(0.3)));
            names.add(prefix + 2 * l + ".bias");
            tensors.add(torch.zeros(sizes[l + 1]));
        }
    }

    /** A categorical rollout's actions, indices stored as floats: now and then one outside the count or not whole. */
    private Tensor indices(final long rows, final int count)
    {
        final Tensor t = floats(new long[] {rows, 1}, 0.0);
        if (t.scalar_type() != torch.ScalarType.Float || !t.is_contiguous() || 0 == rows)
        {
            return t;
        }
        final float[] values = new float[(int)rows];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = random.nextInt(count);
        }
        if (random.nextInt(6) == 0)
        {
            final float[] bad = {-1f, count, 0.5f, Float.NaN, 1e30f};
            values[random.nextInt(values.length)] = bad[random.nextInt(bad.length)];
        }
        new FloatPointer(t.data_ptr()).put(values);
        return t;
    }

    /** Whole minibatches of rows, shuffled; now and then a row outside the rollout or a length off by one. */
    private int[] order(final int rows, final int minibatch)
    {
        final int[] order = new int[Math.max(1, rows / minibatch) * minibatch + (0 == random.nextInt(20) ? 1 : 0)];
        for (int i = 0; i < order.length; i++)
        {
            order[i] = random.nextInt(Math.max(1, rows));
        }
        if (random.nextInt(10) == 0)
        {
            order[random.nextInt(order.length)] = random.nextBoolean() ? -1 : rows;
        }
        return order;
    }

    private static <T extends AutoCloseable> T own(final List<AutoCloseable> owned, final T resource)
    {
        owned.add(resource);
        return resource;
    }

    /** Closes in the reverse order of making: an update before its optimizers, they before their parameters. */
    private static void closeAll(final List<AutoCloseable> owned)
    {
        for (int i = owned.size() - 1; i >= 0; i--)
        {
            try
            {
                owned.get(i).close();
            }
            catch (final Exception ex)
            {
                throw new AssertionError("closing " + owned.get(i) + ": " + ex, ex);
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
