package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The evidence behind {@link Threads}' defaults: one fused-Adam update of each net under explicit
 * (libtorch intra-op, OpenBLAS) thread counts, each combination in its own JVM. Run it without
 * {@code OMP_WAIT_POLICY} in the environment to see libgomp's spin-waiting as it is by default.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class ThreadsBenchmark
{
    @Param({"4-128-128-2/64", "64-512-512-16/256"})
    public String netAndBatch;

    @Param({"1/1", "1/2", "2/1", "2/2"})
    public String intraOpAndBlas;

    private MlpRegressor regressor;
    private Tensor inputs;
    private Tensor targets;

    @Setup(Level.Trial)
    public void setUp()
    {
        final String[] threads = intraOpAndBlas.split("/");
        Threads.configure(Integer.parseInt(threads[0]), 1, Integer.parseInt(threads[1]));
        final String[] parts = netAndBatch.split("/");
        final long[] sizes = Nets.sizes(parts[0]);
        final int batch = Integer.parseInt(parts[1]);
        torch.manual_seed(0);
        regressor = new MlpRegressor(Mlp.of(sizes), AdamConfig.adam(1e-3), 0.0);
        inputs = torch.randn(batch, sizes[0]);
        targets = torch.randn(batch, sizes[sizes.length - 1]);
    }

    @Benchmark
    public double update()
    {
        return regressor.step(inputs, targets);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        regressor.close();
    }
}
