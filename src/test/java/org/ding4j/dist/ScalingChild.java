package org.ding4j.dist;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;
import org.ding4j.torch.Threads;

/**
 * One rank of {@link ScalingBench}: an MLP regression step (forward, MSE, backward, Adam) on a fixed random batch,
 * with its gradients averaged over the group when the world has more than one rank. Modes: {@code fused} (one
 * native call, {@link GradientSync} flat or in buckets overlapping backward), {@code autograd} (libtorch autograd,
 * GradientSync after backward), {@code reducer} (libtorch autograd, c10d's Reducer during backward:
 * {@link DataParallel}). Prints {@code MEDIAN_US u} (the median wall time of the timed updates), {@code BUCKETS n}
 * and {@code PARAMS p}.
 * <p>
 * Arguments: rank world port masterAddr widths(comma-separated) batch bucketBytes warmup updates [mode].
 */
public final class ScalingChild
{
    private ScalingChild()
    {
    }

    public static void main(final String[] args)
    {
        Threads.configure();
        final int rank = Integer.parseInt(args[0]);
        final int world = Integer.parseInt(args[1]);
        final int port = Integer.parseInt(args[2]);
        final String master = args[3];
        final long[] widths = Arrays.stream(args[4].split(",")).mapToLong(Long::parseLong).toArray();
        final int batch = Integer.parseInt(args[5]);
        final long bucketBytes = Long.parseLong(args[6]);
        final int warmup = Integer.parseInt(args[7]);
        final int updates = Integer.parseInt(args[8]);
        final String mode = args.length > 9 ? args[9] : "fused";
        torch.manual_seed(7 + rank);
        try (MlpRegressor regressor = new MlpRegressor(Mlp.of(widths), AdamConfig.adam(1e-4), 0.0);
            Tensor x = torch.randn(batch, widths[0]);
            Tensor y = torch.randn(batch, widths[widths.length - 1]))
        {
            if ("fused".equals(mode))
            {
                regressor.fusedStep(batch);
            }
            DistGroup group = null;
            GradientSync sync = null;
            DataParallel reducer = null;
            if (world > 1)
            {
                group = DistGroup.join(new DistInfo(rank, world, rank, master, port), Duration.ofSeconds(120));
                if ("reducer".equals(mode))
                {
                    reducer = DataParallel.attach(group, regressor.optimizer(), List.of(regressor.mlp().module()),
                        new DataParallel.Options(bucketBytes, false, false));
                }
                else
                {
                    sync = GradientSync.attach(group, regressor.optimizer(), bucketBytes);
                }
            }
            final long[] times = new long[updates];
            for (int i = 0; i < warmup + updates; i++)
            {
                final long began = System.nanoTime();
                regressor.step(x, y);
                if (i >= warmup)
                {
                    times[i - warmup] = System.nanoTime() - began;
                }
            }
            Arrays.sort(times);
            System.out.printf(Locale.ROOT, "MEDIAN_US %.1f%n", times[updates / 2] / 1e3);
            System.out.println("BUCKETS " + (null != reducer ? reducer.bucketCount() : null == sync ? 0
                : sync.bucketCount()));
            System.out.println("PARAMS " + regressor.parameters().numel());
            if (null != reducer)
            {
                reducer.close();
            }
            if (null != sync)
            {
                sync.close();
            }
            if (null != group)
            {
                group.close();
            }
        }
    }
}
