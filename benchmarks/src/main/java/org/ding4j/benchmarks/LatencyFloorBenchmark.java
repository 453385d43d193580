package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The control for {@link LearnerTrainBenchmark}'s tail: pure computation of about the same length as one
 * {@code train()} call (no memory traffic, no other thread, no clock read inside), in the same sample mode. Its
 * p99.9 is what the machine alone (interrupts, the hypervisor, JMH's own timing) does to an operation that long.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"-Xms512m", "-Xmx512m"})
public class LatencyFloorBenchmark
{
    /** Blackhole.consumeCPU tokens; 40 take about as long as a train() call on the 2-core machine here. */
    @Param({"40"})
    public long tokens;

    @Benchmark
    public void spin()
    {
        Blackhole.consumeCPU(tokens);
    }
}
