package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Adam;
import org.bytedeco.pytorch.AdamOptions;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.Mlp;
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
 * The optimizer step alone, gradients already in place: ding4j's fused Adam (one native pass over the flat buffer)
 * against libtorch's {@code torch::optim::Adam} (several tensor ops per parameter). DESIGN.md target 3: >= 5x on
 * net (a).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class OptimizerStepBenchmark extends OptimizedNet
{
    @Param({"4-128-128-2", "64-512-512-16"})
    public String net;

    @Param({"fused", "libtorch"})
    public String adam;


    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure();
        torch.manual_seed(0);
        mlp = Mlp.of(Nets.sizes(net));
        final long[] sizes = mlp.sizes();
        if ("fused".equals(adam))
        {
            flat = FlatParameters.of(mlp.module());
            fused = new FusedAdam(flat, AdamConfig.adam(1e-3));
        }
        else
        {
            reference = new Adam(mlp.module().parameters(), new AdamOptions(1e-3));
        }
        try (PointerScope scope = new PointerScope())
        {
            final Tensor x = torch.randn(64, sizes[0]);
            torch.mse_loss(mlp.forward(x), torch.zeros(64, sizes[sizes.length - 1])).backward();
        }
    }

    @Benchmark
    public void step()
    {
        if (null != fused)
        {
            fused.step();
        }
        else
        {
            try (PointerScope scope = new PointerScope())
            {
                reference.step();
            }
        }
    }

    public static void main(final String[] args) throws RunnerException
    {
        new Runner(new OptionsBuilder().include(OptimizerStepBenchmark.class.getSimpleName())
            .shouldFailOnError(true).build()).run();
    }
}
