package org.ding4j.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.dist.DistGroup;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.GradientSync;
import org.ding4j.rl.dqn.QNetwork;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.Threads;

/**
 * Gradient sync time per update on N Gloo ranks (JMH cannot fork the N cooperating JVMs, so this is a harness run
 * through {@code ding4j launch}): ding4j's one all-reduce of the flat gradient buffer plus one scale
 * ({@link GradientSync#reduce}), against DI-engine's {@code allreduce} of each parameter's gradient tensor and
 * its division by the world size, on the CartPole Q-network (4-128-128-64 dueling, 14 tensors) and the 64-512-512-16
 * MLP (6 tensors). The two ways alternate in rounds so that machine noise hits both; rank 0 prints the medians.
 * <p>
 * Arguments: [rounds (default 10)] [updates per round (default 200)]
 */
public final class GradientSyncHarness
{
    private GradientSyncHarness()
    {
    }

    public static void main(final String[] args)
    {
        Threads.configure(1, 1, 1);
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        final int updates = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        final DistInfo info = DistInfo.fromEnvironment(System.getenv());
        try (DistGroup group = DistGroup.join(info, Duration.ofSeconds(60));
            QNetwork cartpole = new QNetwork(4, 2, new long[] {128, 128, 64}, true);
            FlatParameters cartpoleParams = FlatParameters.of(cartpole.module());
            Mlp large = Mlp.of(64, 512, 512, 16);
            FlatParameters largeParams = FlatParameters.of(large.module()))
        {
            run(group, "cartpole 4-128-128-64 dueling", cartpoleParams, rounds, updates);
            run(group, "mlp 64-512-512-16", largeParams, rounds, updates);
        }
    }

    private static void run(final DistGroup group, final String name, final FlatParameters params, final int rounds,
        final int updates)
    {
        final Tensor[] perTensor = new Tensor[params.size()];
        for (int i = 0; i < perTensor.length; i++)
        {
            perTensor[i] = params.groupOf(i).grads().narrow(0, params.offset(i), numel(params.shape(i)));
        }
        final GradientSync flat = GradientSync.forGroup(group);
        final Scalar scale = new Scalar(1.0 / group.info().worldSize());
        final long[] flatNs = new long[rounds * updates];
        final long[] tensorNs = new long[rounds * updates];
        // One warm-up round of each, not recorded.
        measure(() -> flat.reduce(params), new long[updates], 0, updates);
        measure(() -> perParameter(group, perTensor, scale), new long[updates], 0, updates);
        for (int r = 0; r < rounds; r++)
        {
            measure(() -> flat.reduce(params), flatNs, r * updates, updates);
            measure(() -> perParameter(group, perTensor, scale), tensorNs, r * updates, updates);
        }
        if (0 == group.info().rank())
        {
            final double flatMedian = median(flatNs) / 1e3;
            final double tensorMedian = median(tensorNs) / 1e3;
            System.out.printf(Locale.ROOT, "%s: %d params in %d tensors, %d ranks, %d updates each: flat all-reduce "
                    + "median %.1f us (p90 %.1f), per-tensor (%d all-reduces) median %.1f us (p90 %.1f); ratio %.2fx%n",
                name, params.numel(), params.size(), group.info().worldSize(), flatNs.length, flatMedian,
                percentile(flatNs, 0.9) / 1e3, params.size(), tensorMedian, percentile(tensorNs, 0.9) / 1e3,
                tensorMedian / flatMedian);
        }
        scale.close();
        flat.close();
        for (final Tensor t : perTensor)
        {
            t.close();
        }
    }

    /** DI-engine's way: every parameter's gradient reduced and divided on its own. */
    private static void perParameter(final DistGroup group, final Tensor[] grads, final Scalar scale)
    {
        for (final Tensor grad : grads)
        {
            group.allReduceSum(grad, "allreduce gradient tensor");
            grad.mul_(scale);
        }
    }

    private static void measure(final Runnable sync, final long[] into, final int from, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long start = System.nanoTime();
            sync.run();
            into[from + i] = System.nanoTime() - start;
        }
    }

    private static long numel(final long[] shape)
    {
        long n = 1;
        for (final long d : shape)
        {
            n *= d;
        }
        return n;
    }

    private static double median(final long[] values)
    {
        return percentile(values, 0.5);
    }

    private static double percentile(final long[] values, final double q)
    {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int)Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    }
}
