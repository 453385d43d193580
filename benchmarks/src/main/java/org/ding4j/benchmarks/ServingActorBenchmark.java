package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.rl.ServingActor;
import org.ding4j.rl.ac.ActorCritic;
import org.ding4j.rl.ac.Td3Policy;
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
 * A service thread's batch-1 action from {@link ServingActor} on published weights: DQN's greedy action, TD3's
 * deterministic action of a 3-64-64-1 actor. DQN's nets have DI-engine's heads (a hidden layer of the encoder's width
 * before each output): {@code dqn} is the 6-128-128 encoder with a dueling head (50.4k multiply-adds),
 * {@code dqn-128} the 6-128 encoder with a dueling head (6-128-128-3 and 6-128-128-1 branches: 34.0k),
 * {@code dqn-128-plain} the 6-128 encoder with a plain head (the 6-128-128-3 MLP: 17.5k, 35 kFLOP). Sample mode, for
 * p50 and p99; {@code -prof gc} for the bytes per call.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class ServingActorBenchmark
{
    /** Which net serves. */
    @Param({"dqn", "dqn-128", "dqn-128-plain", "td3"})
    public String net;

    private DqnPolicy dqn;
    private ActorCritic td3;
    private ServingActor actor;
    private float[] obs;
    private final float[] action = new float[1];

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure();
        torch.manual_seed(0);
        if (net.startsWith("dqn"))
        {
            dqn = new DqnPolicy(new DqnPolicy.Settings(6, 3, "dqn".equals(net) ? new long[] {128, 128}
                : new long[] {128}, !net.endsWith("plain"), 64, 1e-3, 100, 0.0, false, 0.0, Activation.RELU));
            actor = ServingActor.greedy(dqn);
            obs = new float[] {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f};
        }
        else
        {
            td3 = new Td3Policy(new Td3Policy.Settings(new ActorCritic.Nets(3, 1, new long[] {64, 64},
                new long[] {64, 64}, 100, 0.99, 0.005, 1e-3, 1e-3), 2, 0.2, 0.5, 0.1), 1);
            actor = ServingActor.of(td3);
            obs = new float[] {0.5f, -0.8f, 0.3f};
        }
    }

    @Benchmark
    public float act()
    {
        actor.act(obs, 1, action);
        return action[0];
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != dqn)
        {
            dqn.close();
        }
        if (null != td3)
        {
            td3.close();
        }
    }
}
