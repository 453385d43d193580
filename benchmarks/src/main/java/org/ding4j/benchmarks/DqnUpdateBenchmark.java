package org.ding4j.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.rl.dqn.DqnBatch;
import org.ding4j.rl.dqn.DqnPolicy;
import org.ding4j.torch.Activation;
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
 * Adam, {@code libtorch} is autograd operator by operator plus the same Adam, {@code gemm} runs only the same
 * sequence of {@code cblas_sgemm} calls (3 forwards of 7 layers, then weight and input gradients: 34 products), the
 * limit any implementation of this update has on this BLAS and core. One libtorch thread, {@code blas}
 * OpenBLAS threads; {@code activation} relu or tanh.
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
    /** fused / libtorch: the update; gemm: the update's 34 matrix products alone (the floor for this BLAS). */
    @Param({"fused", "libtorch", "gemm"})
    public String update;

    /** OpenBLAS threads (libtorch's intra-op stays 1): the library's default rule is measured with this. */
    @Param({"1"})
    public int blas;

    /** The hidden activation: relu (DI-engine's) or tanh. */
    @Param({"relu"})
    public String activation;

    /** The layers as (in, out): encoder 4-128-128-64, head A 64-64-2, head V 64-64-1. */
    private static final int[][] LAYERS = {{4, 128}, {128, 128}, {128, 64}, {64, 64}, {64, 2}, {64, 64}, {64, 1}};
    private static final int B = 64;

    private DqnPolicy policy;
    private DqnBatch batch;
    private FloatPointer x;
    private FloatPointer w;
    private FloatPointer y;
    private static final int ROW_MAJOR = 101;
    private static final int NO_TRANS = 111;
    private static final int TRANS = 112;

    private final LogSink sink = LogSink.discard();

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure(1, 1, blas);
        if ("gemm".equals(update))
        {
            final SplittableRandom random = new SplittableRandom(2);
            x = new FloatPointer(B * 128);
            w = new FloatPointer(128 * 128);
            y = new FloatPointer(B * 128);
            for (final FloatPointer p : new FloatPointer[] {x, w, y})
            {
                for (long i = 0; i < p.capacity(); i++)
                {
                    p.put(i, (float)random.nextGaussian());
                }
            }
            return;
        }
        torch.manual_seed(0);
        policy = new DqnPolicy(new DqnPolicy.Settings(4, 2, new long[] {128, 128, 64}, true, 64, 1e-3, 100, 0.0,
            false, 0.0, Activation.parse("activation", activation)));
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
        if (null == policy)
        {
            gemms();
            return;
        }
        policy.forward(batch, sink);
    }

    /** The fused update's products, in its order: 3 forwards, then per layer dW and (but the first) dX. */
    private void gemms()
    {
        for (int f = 0; f < 3; f++)
        {
            for (final int[] l : LAYERS)
            {
                openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, TRANS, B, l[1], l[0], 1f, x, l[0], w, l[0], 0f, y,
                    l[1]);
            }
        }
        for (int i = LAYERS.length - 1; i >= 0; i--)
        {
            final int[] l = LAYERS[i];
            openblas_nolapack.cblas_sgemm(ROW_MAJOR, TRANS, NO_TRANS, l[1], l[0], B, 1f, y, l[1], x, l[0], 0f, w, l[0]);
            if (0 != i)
            {
                openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, B, l[0], l[1], 1f, y, l[1], w, l[0], 0f,
                    x, l[0]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != policy)
        {
            batch.close();
            policy.close();
        }
        else
        {
            x.close();
            w.close();
            y.close();
        }
    }
}
