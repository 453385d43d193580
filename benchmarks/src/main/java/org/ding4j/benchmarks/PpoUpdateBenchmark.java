package org.ding4j.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.rl.ppo.PpoBatch;
import org.ding4j.rl.ppo.PpoPolicy;
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
 * One PPO training call on a rollout (every epoch's minibatches) at the shipped configs' shapes, one libtorch and one
 * OpenBLAS thread: {@code head=categorical} is {@code examples/cartpole_ppo.yaml} (4-64-64-2 actor, 4-64-64-1
 * critic, 512 rows, 4 epochs of 128: 16 minibatches), {@code gaussian} is {@code examples/pendulum_ppo.yaml}
 * (3-64-64-1, 4096 rows, 10 epochs of 64: 640 minibatches). {@code fused}: {@code FusedPpo}'s one native call
 * ({@code -p threads=2}: each minibatch's critic half on a second thread); {@code libtorch}:
 * autograd, minibatch by minibatch; {@code gemm}: the minibatches' {@code cblas_sgemm} calls alone at the same shapes
 * (16 per minibatch: 6 forward, 6 weight gradients, 4 input gradients), the floor for this BLAS on one core. Divide a
 * call's time by its minibatches for the cost of one; each fork prints both counts and the FLOPs.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class PpoUpdateBenchmark
{
    @Param({"categorical", "gaussian"})
    public String head;

    @Param({"fused", "libtorch", "gemm"})
    public String update;

    /** The fused update's threads: 2 puts each minibatch's critic half on the second core ({@code update_threads}). */
    @Param({"1"})
    public int threads;

    private static final int H = 64;

    private final LogSink sink = LogSink.discard();
    private PpoPolicy policy;
    private PpoBatch batch;
    /** One minibatch's GEMMs. */
    private final GemmPlan plan = new GemmPlan();
    private int minibatches;

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure(1, 1, 1);
        final boolean discrete = "categorical".equals(head);
        final int obs = discrete ? 4 : 3;
        final int act = discrete ? 2 : 1;
        final int rows = discrete ? 512 : 4096;
        final int mb = discrete ? 128 : 64;
        final int epochs = discrete ? 4 : 10;
        minibatches = epochs * rows / mb;
        final int[][] actor = {{obs, H}, {H, H}, {H, act}};
        final int[][] critic = {{obs, H}, {H, H}, {H, 1}};
        plan.forward(mb, actor).forward(mb, critic).backward(mb, actor, true, false).backward(mb, critic, true, false);
        System.out.printf("%s: %d minibatches per call, FLOP per minibatch %.0f%n", head, minibatches, plan.flops());
        if ("gemm".equals(update))
        {
            // Every operand fits in mb x H floats (mb >= H here).
            plan.allocate((long)mb * H);
            return;
        }
        final SplittableRandom random = new SplittableRandom(1);
        torch.manual_seed(0);
        policy = new PpoPolicy(new PpoPolicy.Settings(obs, act, discrete, new long[] {H, H}, mb, epochs, 1e-3, 0.2,
            false, 0.5, discrete ? 0.01 : 0.0, true, 0.5, "fused".equals(update)), 1);
        policy.updateThreads(threads);
        policy.registerLogVars(sink);
        final int width = discrete ? 1 : act;
        batch = new PpoBatch(rows, obs, width);
        final float[] o = new float[rows * obs];
        final float[] a = new float[rows * width];
        final float[] logp = new float[rows];
        final float[] v = new float[rows];
        final float[] adv = new float[rows];
        final float[] ret = new float[rows];
        for (int i = 0; i < o.length; i++)
        {
            o[i] = (float)random.nextDouble(-1, 1);
        }
        for (int r = 0; r < rows; r++)
        {
            a[r * width] = discrete ? random.nextInt(act) : (float)random.nextGaussian();
            logp[r] = (float)(discrete ? Math.log(0.5) : -0.92 - 0.5 * a[r * width] * a[r * width]);
            v[r] = (float)random.nextGaussian();
            adv[r] = (float)random.nextGaussian();
            ret[r] = v[r] + adv[r];
        }
        batch.fill(o, a, logp, v, adv, ret);
    }

    @Benchmark
    public void update()
    {
        if (null != policy)
        {
            policy.forward(batch, sink);
            return;
        }
        for (int j = 0; j < minibatches; j++)
        {
            plan.run();
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
        plan.close();
    }
}
