package org.ding4j.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.log.ScalarDict;
import org.ding4j.log.TickMonitor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Log-buffer writes by index from one and from two producer threads (each its own keys), and the monitor's
 * {@code avg} against the window size.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class LogBufferBenchmark
{
    /** One shared buffer; each producer writes four keys of its own. */
    @State(Scope.Group)
    public static class Shared
    {
        final ScalarDict dict = new ScalarDict();
        final int[] first = new int[4];
        final int[] second = new int[4];

        @Setup(Level.Trial)
        public void setUp()
        {
            for (int i = 0; i < 4; i++)
            {
                first[i] = dict.register("a" + i);
                second[i] = dict.register("b" + i);
            }
        }
    }

    @Benchmark
    @Group("oneProducer")
    @GroupThreads(1)
    public void oneProducer(final Shared shared)
    {
        write(shared.dict, shared.first);
    }

    @Benchmark
    @Group("twoProducers")
    @GroupThreads(1)
    public void producerA(final Shared shared)
    {
        write(shared.dict, shared.first);
    }

    @Benchmark
    @Group("twoProducers")
    @GroupThreads(1)
    public void producerB(final Shared shared)
    {
        write(shared.dict, shared.second);
    }

    private static void write(final ScalarDict dict, final int[] keys)
    {
        for (int i = 0; i < keys.length; i++)
        {
            dict.put(keys[i], i);
        }
    }

    /** A monitor whose window holds {@code window} records of one variable. */
    @State(Scope.Thread)
    public static class Monitor
    {
        @Param({"10", "100", "1000"})
        public int window;

        TickMonitor monitor;

        @Setup(Level.Trial)
        public void setUp()
        {
            final List<String> vars = new ArrayList<>(List.of("total_loss"));
            monitor = new TickMonitor(vars, window);
            for (int i = 0; i < 2 * window; i++)
            {
                monitor.record("total_loss", i);
                monitor.step();
            }
        }
    }

    /** One record, one tick and one average: what log_show does per variable per iteration. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public double recordAndAverage(final Monitor state)
    {
        state.monitor.record("total_loss", 1.0);
        state.monitor.step();
        return state.monitor.avg("total_loss");
    }
}
