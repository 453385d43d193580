package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.openblas.global.openblas_nolapack;
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
 * One supervised Adam step of the 4-128-128-2 MLP on a batch of 64 (MSE): {@code fused} is
 * {@code MlpRegressor.fusedStep} (forward and backward in one native call, then the fused Adam), {@code libtorch}
 * the same regressor through autograd, {@code gemm} the step's 8 matrix products alone (the floor for this BLAS).
 * One libtorch and one OpenBLAS thread; sample mode for percentiles.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m"})
public class MlpStepBenchmark
{
    private static final int B = 64;
    private static final int[][] LAYERS = {{4, 128}, {128, 128}, {128, 2}};
    private static final int ROW_MAJOR = 101;
    private static final int NO_TRANS = 111;
    private static final int TRANS = 112;

    @Param({"fused", "libtorch", "gemm"})
    public String step;

    private MlpRegressor regressor;
    private Tensor inputs;
    private Tensor targets;
    private FloatPointer a;
    private FloatPointer w;
    private FloatPointer c;

    @Setup(Level.Trial)
    public void setUp()
    {
        Threads.configure(1, 1, 1);
        torch.manual_seed(0);
        if ("gemm".equals(step))
        {
            a = new FloatPointer(B * 128).fill(1);
            w = new FloatPointer(128 * 128).fill(1);
            c = new FloatPointer(B * 128).fill(1);
            return;
        }
        regressor = new MlpRegressor(Mlp.of(4, 128, 128, 2), AdamConfig.adam(1e-3), 0);
        if ("fused".equals(step))
        {
            regressor.fusedStep(B);
        }
        inputs = torch.randn(B, 4);
        targets = torch.randn(B, 2);
    }

    @Benchmark
    public double step()
    {
        if (null == regressor)
        {
            for (final int[] l : LAYERS)
            {
                openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, TRANS, B, l[1], l[0], 1f, a, l[0], w, l[0], 0f, c,
                    l[1]);
            }
            for (int i = LAYERS.length - 1; i >= 0; i--)
            {
                final int[] l = LAYERS[i];
                openblas_nolapack.cblas_sgemm(ROW_MAJOR, TRANS, NO_TRANS, l[1], l[0], B, 1f, c, l[1], a, l[0], 0f, w,
                    l[0]);
                if (0 != i)
                {
                    openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, B, l[0], l[1], 1f, c, l[1], w, l[0],
                        0f, a, l[0]);
                }
            }
            return 0;
        }
        return regressor.step(inputs, targets);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != regressor)
        {
            regressor.close();
            inputs.close();
            targets.close();
        }
        else
        {
            a.close();
            w.close();
            c.close();
        }
    }
}
