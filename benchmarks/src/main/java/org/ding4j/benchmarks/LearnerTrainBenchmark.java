package org.ding4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.learner.BaseLearner;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.MapPolicy;
import org.ding4j.policy.Policy;
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
 * DESIGN.md target 1: the learner's own cost per {@code train()} with a no-op policy writing 4 scalars,
 * {@code log_show} every 100 iterations, TensorBoard on (a real event file in a temp folder), no checkpoints.
 * {@code sink}: a typed policy writing by index (the zero-allocation path); {@code map}: a DI-engine-style
 * {@link MapPolicy} returning a map.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class LearnerTrainBenchmark
{
    @Param({"sink", "map"})
    public String policy;

    /** log_show period; 100 is the target's setting, a huge one isolates the per-call path. */
    @Param({"100"})
    public long logShowEvery;

    private BaseLearner<Object> learner;
    private Path folder;
    private final Object batch = List.of();

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        folder = Files.createTempDirectory("ding4j-bench");
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("log_policy=false",
            "hook.log_show_after_iter=" + logShowEvery, "hook.save_ckpt_after_iter=1000000000", "hook.save_ckpt_after_run=false"));
        learner = new BaseLearner<>(cfg, "sink".equals(policy) ? new NoOpSinkPolicy() : new NoOpMapPolicy(), null,
            DistInfo.single(), folder.toString(), "learner");
    }

    @Benchmark
    public void train()
    {
        learner.train(batch);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        learner.close();
    }

    /** What both no-op policies share: the four monitor vars, a batch size and an empty state. */
    interface NoOpPolicy extends Policy<Object>
    {
        @Override
        default List<String> monitorVars()
        {
            return List.of("cur_lr", "total_loss", "q_value", "target_q_value");
        }

        @Override
        default int batchSize()
        {
            return 1;
        }

        @Override
        default Map<String, Object> stateDict()
        {
            return Map.of();
        }

        @Override
        default void loadStateDict(final Map<String, Object> state)
        {
        }
    }

    /** Writes four scalars by index. */
    static final class NoOpSinkPolicy implements NoOpPolicy
    {
        private int a;
        private int b;
        private int c;
        private int d;
        private double x;

        @Override
        public void registerLogVars(final LogSink sink)
        {
            a = sink.register("cur_lr");
            b = sink.register("total_loss");
            c = sink.register("q_value");
            d = sink.register("target_q_value");
        }

        @Override
        public void forward(final Object data, final LogSink sink)
        {
            x += 1.0;
            sink.put(a, 1e-3);
            sink.put(b, x);
            sink.put(c, 2.0 * x);
            sink.put(d, 3.0 * x);
        }
    }

    /** Returns a fresh map of four numbers, as a DI-engine policy does. */
    static final class NoOpMapPolicy extends MapPolicy<Object> implements NoOpPolicy
    {
        private double x;

        @Override
        protected Map<String, Object> learn(final Object data)
        {
            x += 1.0;
            final Map<String, Object> vars = new HashMap<>(8);
            vars.put("cur_lr", 1e-3);
            vars.put("total_loss", x);
            vars.put("q_value", 2.0 * x);
            vars.put("target_q_value", 3.0 * x);
            return vars;
        }
    }
}
