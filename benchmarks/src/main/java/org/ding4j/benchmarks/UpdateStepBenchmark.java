package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Adam;
import org.bytedeco.pytorch.AdamOptions;
import org.bytedeco.pytorch.SGD;
import org.bytedeco.pytorch.SGDOptions;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.FusedSgd;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.SgdConfig;
import org.ding4j.torch.Threads;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * A whole supervised update (zero grads, forward, MSE loss, backward, optimizer step) with each optimizer:
 * ding4j's fused Adam / SGD over flat buffers, or libtorch's per-parameter Adam / SGD. Each update runs in its own
 * PointerScope, as ding4j's training loops do.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class UpdateStepBenchmark extends OptimizedNet
{
    @Param({"4-128-128-2", "64-512-512-16"})
    public String net;

    @Param({"64", "256"})
    public int batch;

    @Param({"fusedAdam", "libtorchAdam", "fusedSgd", "libtorchSgd"})
    public String optimizer;

    private Tensor inputs;
    private Tensor targets;

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure();
        torch.manual_seed(0);
        mlp = Mlp.of(Nets.sizes(net));
        final long[] sizes = mlp.sizes();
        switch (optimizer)
        {
            case "fusedAdam" -> fused = new FusedAdam(flat = FlatParameters.of(mlp.module()), AdamConfig.adam(1e-3));
            case "fusedSgd" -> fused = new FusedSgd(flat = FlatParameters.of(mlp.module()), SgdConfig.sgd(1e-2, 0.9));
            case "libtorchAdam" -> reference = new Adam(mlp.module().parameters(), new AdamOptions(1e-3));
            case "libtorchSgd" ->
            {
                final SGDOptions options = new SGDOptions(1e-2);
                options.momentum().put(0.9);
                reference = new SGD(mlp.module().parameters(), options);
            }
            default -> throw new IllegalArgumentException("optimizer=" + optimizer);
        }
        inputs = torch.randn(batch, sizes[0]);
        targets = torch.randn(batch, sizes[sizes.length - 1]);
    }

    @Benchmark
    public double update()
    {
        try (PointerScope scope = new PointerScope())
        {
            if (null != fused)
            {
                flat.zeroGrad();
            }
            else
            {
                reference.zero_grad();
            }
            final Tensor loss = torch.mse_loss(mlp.forward(inputs), targets);
            loss.backward();
            if (null != fused)
            {
                fused.step();
            }
            else
            {
                reference.step();
            }
            return loss.item_double();
        }
    }

    public static void main(final String[] args) throws RunnerException
    {
        new Runner(new OptionsBuilder().include(UpdateStepBenchmark.class.getSimpleName())
            .shouldFailOnError(true).build()).run();
    }
}
