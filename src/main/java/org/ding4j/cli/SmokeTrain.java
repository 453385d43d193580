package org.ding4j.cli;

import java.util.concurrent.Callable;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;
import org.ding4j.torch.Threads;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ding4j smoke}: trains the 4-128-128-2 MLP (benchmark net (a)) with the fused Adam on a
 * fixed non-linear regression target and prints the loss as it falls. It exits 1 if the loss does not fall.
 */
@Command(name = "smoke", mixinStandardHelpOptions = true,
    description = "Train a 4-128-128-2 MLP regressor with the fused Adam; exit 1 unless the loss halves.")
final class SmokeTrain implements Callable<Integer>
{
    private static final int BATCH = 64;

    @Parameters(index = "0", defaultValue = "2000", description = "update steps (default ${DEFAULT-VALUE})")
    private int steps;

    @Parameters(index = "1", defaultValue = "0", description = "seed (default ${DEFAULT-VALUE})")
    private long seed;

    @Override
    public Integer call()
    {
        if (steps < 1)
        {
            throw new IllegalArgumentException("steps: expected a positive integer, got " + steps);
        }
        final Threads.Settings threads = Threads.configure();
        System.out.printf("ding4j smoke run: MLP 4-128-128-2, fused Adam lr 1e-3, batch %d, %d steps, seed %d, "
            + "threads intra-op %d / OpenBLAS %d%n", BATCH, steps, seed, threads.intraOp(), threads.blas());
        torch.manual_seed(seed);
        try (MlpRegressor regressor = new MlpRegressor(Mlp.of(4, 128, 128, 2), AdamConfig.adam(1e-3), 0.0))
        {
            double first = Double.NaN;
            double recent = 0.0;
            final long start = System.nanoTime();
            for (int step = 1; step <= steps; step++)
            {
                final double loss;
                try (PointerScope scope = new PointerScope())
                {
                    final Tensor x = torch.randn(BATCH, 4);
                    loss = regressor.step(x, target(x));
                }
                if (1 == step)
                {
                    first = loss;
                }
                recent += loss;
                if (0 == step % Math.max(1, steps / 10))
                {
                    System.out.printf("step %6d  loss %.6f%n", step, recent / Math.max(1, steps / 10));
                    recent = 0.0;
                }
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            try (PointerScope scope = new PointerScope())
            {
                final Tensor x = torch.randn(1024, 4);
                final double last = torch.mse_loss(regressor.mlp().forward(x), target(x)).item_double();
                System.out.printf("first loss %.6f, held-out loss %.6f, %.1f us/step (%d steps in %.2f s)%n",
                    first, last, seconds * 1e6 / steps, steps, seconds);
                if (!(last < 0.5 * first))
                {
                    System.err.println("loss did not fall by half: first=" + first + " last=" + last);
                    return 1;
                }
            }
        }
        return 0;
    }

    /** y = (sin(x0) + x1 * x2, x3^2 / 2): smooth, non-linear, and learnable by this net. */
    private static Tensor target(final Tensor x)
    {
        final Tensor y0 = torch.sin(x.select(1, 0)).add(x.select(1, 1).mul(x.select(1, 2)));
        final Tensor y1 = x.select(1, 3).pow(new Scalar(2.0)).mul(new Scalar(0.5));
        return torch.stack(new org.bytedeco.pytorch.TensorVector(y0, y1), 1);
    }
}
