package org.ding4j.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.example.dqn.DqnBatch;
import org.ding4j.example.dqn.DqnPolicy;
import org.ding4j.policy.LogSink;
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
 * One DQN update of DI-engine's CartPole net (4-128-128-64, dueling, batch 64, double DQN, MSE, Adam) as
 * {@code DqnPolicy.forward} runs it: {@code fused} is the one native call ({@code FusedDqnUpdate}) plus the fused
 * Adam, {@code libtorch} is autograd operator by operator plus the same Adam. One libtorch thread, {@code blas}
 * OpenBLAS threads.
 * Sample mode, so the result has percentiles (p50 is the figure to quote).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class DqnUpdateBenchmark
{
    @Param({"fused", "libtorch"})
    public String update;

    /** OpenBLAS threads (libtorch's intra-op stays 1): the library's default rule is measured with this. */
    @Param({"1"})
    public int blas;

    private DqnPolicy policy;
    private DqnBatch batch;
    private final LogSink sink = new LogSink()
    {
        @Override
        public int register(final String key)
        {
            return 0;
        }

        @Override
        public void put(final int index, final double value)
        {
        }

        @Override
        public void value(final String key, final Object value)
        {
        }

        @Override
        public void priority(final double[] values, final int[] slots, final long[] ids, final int count)
        {
        }

        @Override
        public void nextUpdate()
        {
        }
    };

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure(1, 1, blas);
        torch.manual_seed(0);
        policy = new DqnPolicy(new DqnPolicy.Settings(4, 2, new long[] {128, 128, 64}, true, 64, 1e-3, 100, 0.0,
            false, 0.0));
        policy.fusedUpdate("fused".equals(update));
        policy.registerLogVars(sink);
        batch = new DqnBatch(64, 4);
        final SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = (float)random.nextGaussian();
            batch.nextObs[i] = (float)random.nextGaussian();
        }
        for (int i = 0; i < 64; i++)
        {
            batch.action[i] = random.nextInt(2);
            batch.nstepReturn[i] = 1f;
            batch.bootstrap[i] = 0.97f;
        }
    }

    @Benchmark
    public void update()
    {
        policy.forward(batch, sink);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        batch.close();
        policy.close();
    }
}
