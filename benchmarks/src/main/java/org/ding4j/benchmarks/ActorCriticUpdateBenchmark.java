package org.ding4j.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.rl.ac.ActorCritic;
import org.ding4j.rl.ac.ControlBatch;
import org.ding4j.rl.ac.SacPolicy;
import org.ding4j.rl.ac.Td3Policy;
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
 * One TD3 or SAC update on the shipped Pendulum nets ({@code nets=shipped}: 64-wide actor and critics, batch 64) or
 * DI-engine's ({@code dizoo}: TD3 64-wide, SAC 128-wide, batch 128), one libtorch and one OpenBLAS thread:
 * {@code fused} (one native call: {@code FusedActorCritic}; {@code -p threads=2} its twin critics on two threads),
 * {@code libtorch} (autograd, operator by operator) and {@code gemm}, the update's {@code cblas_sgemm} calls alone at
 * the same shapes (TD3: 25 per update plus 14 every second one, as its actor is delayed; SAC: 45), the floor for this
 * BLAS on one core. Each fork prints its update's matrix-product FLOPs ({@code FLOP per update}), for GFLOP/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class ActorCriticUpdateBenchmark
{
    @Param({"td3", "sac"})
    public String algorithm;

    @Param({"fused", "libtorch", "gemm"})
    public String update;

    @Param({"shipped", "dizoo"})
    public String nets;

    /** The fused update's threads: 2 puts the twin critics' halves on the second core ({@code update_threads}). */
    @Param({"1"})
    public int threads;

    private int b;
    private static final int OBS = 3;
    private static final int ACT = 1;

    private final LogSink sink = LogSink.discard();
    private ActorCritic policy;
    private ControlBatch batch;
    /** The update's GEMMs; TD3's second plan (its delayed actor) runs every other update. */
    private final GemmPlan every = new GemmPlan();
    private final GemmPlan alternate = new GemmPlan();
    private long calls;

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure(1, 1, 1);
        final boolean td3 = "td3".equals(algorithm);
        final boolean dizoo = "dizoo".equals(nets);
        final int h = td3 || !dizoo ? 64 : 128;
        b = dizoo ? 128 : 64;
        gemmPlan(td3, h);
        System.out.printf("FLOP per update (%s, %s nets): %.0f%n", algorithm, nets, flops());
        if ("gemm".equals(update))
        {
            // Every operand fits in max(b, h) x h floats.
            every.allocate((long)Math.max(b, h) * h);
            alternate.allocate((long)Math.max(b, h) * h);
            return;
        }
        torch.manual_seed(0);
        final ActorCritic.Nets settings = new ActorCritic.Nets(OBS, ACT, new long[] {h, h}, new long[] {h, h}, b, 0.99,
            0.005, 1e-3, 1e-3);
        policy = td3 ? new Td3Policy(new Td3Policy.Settings(settings, 2, 0.1, 0.5, 0.1), 1)
            : new SacPolicy(new SacPolicy.Settings(settings, true, 0.2, 3e-4), 1);
        policy.updateThreads(threads);
        policy.fusedUpdate("fused".equals(update));
        policy.registerLogVars(sink);
        batch = new ControlBatch(b, OBS, ACT);
        final SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = (float)random.nextDouble(-1, 1);
            batch.nextObs[i] = (float)random.nextDouble(-1, 1);
        }
        for (int i = 0; i < b; i++)
        {
            batch.action[i] = (float)random.nextDouble(-1, 1);
            batch.reward[i] = (float)random.nextDouble(-16, 0);
            batch.notDone[i] = 1f;
        }
    }

    /** The GEMMs of one update, layer by layer, as native/ding4j_ac.h runs them. */
    private void gemmPlan(final boolean td3, final int h)
    {
        final int[][] actor = {{OBS, h}, {h, h}, {h, (td3 ? 1 : 2) * ACT}};
        final int[][] critic = {{OBS + ACT, h}, {h, h}, {h, 1}};
        every.forward(b, actor).forward(b, critic).forward(b, critic);
        for (int k = 0; k < 2; k++)
        {
            every.forward(b, critic).backward(b, critic, true, false);
        }
        // TD3's actor part runs every other update; SAC's every update.
        final GemmPlan actorPart = td3 ? alternate : every;
        actorPart.forward(b, actor);
        for (int k = 0; k < (td3 ? 1 : 2); k++)
        {
            actorPart.forward(b, critic).backward(b, critic, false, true);
        }
        actorPart.backward(b, actor, true, false);
    }

    /** @return 2 M N K summed over the plan: every update's GEMMs plus half of TD3's delayed ones */
    private double flops()
    {
        return every.flops() + alternate.flops() / 2;
    }

    @Benchmark
    public void update()
    {
        if (null == policy)
        {
            every.run();
            if (0 == (calls++ & 1))
            {
                alternate.run();
            }
            return;
        }
        policy.forward(batch, sink);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != policy)
        {
            batch.close();
            policy.close();
        }
        every.close();
        alternate.close();
    }
}
