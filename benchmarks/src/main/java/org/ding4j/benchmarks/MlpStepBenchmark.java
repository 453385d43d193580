package org.ding4j.benchmarks;

import java.util.concurrent.TimeUnit;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.translate.Batchifier;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.Adam;
import org.bytedeco.pytorch.AdamOptions;
import org.bytedeco.pytorch.LinearImpl;
import org.bytedeco.pytorch.Module;
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
 * One supervised Adam step (MSE) of an MLP, the contenders side by side: {@code fused} is
 * {@code MlpRegressor.fusedStep} (forward and backward in one native call, then the fused Adam), {@code libtorch}
 * the same regressor through autograd, {@code javacpp} what a user writes on the bare JavaCPP presets (a libtorch
 * {@code Module} of {@code Linear}s, {@code torch::optim::Adam}, a scope per step), {@code djlTrainer} DJL 0.36's
 * PyTorch engine through its {@code Trainer} ({@code EasyTrain.trainBatch} then {@code step}), {@code djlLoop} the
 * same trainer driven by hand ({@code GradientCollector}, forward, loss, backward, step), and {@code gemm} the
 * step's matrix products alone through OpenBLAS (the floor for this BLAS). Nets: {@code small} 4-128-128-2 on a
 * batch of 64 (the RL case), {@code large} 64-512-512-16 on 256. One intra-op and one BLAS thread everywhere (DJL's
 * through its system properties); every contender runs in its own fork, so DJL's libtorch 2.7.1 and the presets'
 * 2.10.0 never share a process. Sample mode for percentiles.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-Xms512m", "-Xmx512m", "-Dai.djl.offline=true",
    "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"})
public class MlpStepBenchmark
{
    private static final int ROW_MAJOR = 101;
    private static final int NO_TRANS = 111;
    private static final int TRANS = 112;

    @Param({"fused", "libtorch", "javacpp", "djlTrainer", "djlLoop", "gemm"})
    public String step;

    @Param({"small", "large"})
    public String net;

    private long[] sizes;
    private int batch;
    // ding4j
    private MlpRegressor regressor;
    private Tensor inputs;
    private Tensor targets;
    // bare JavaCPP
    private Module module;
    private LinearImpl[] layers;
    private Adam adam;
    // DJL
    private Model model;
    private Trainer trainer;
    private NDManager manager;
    private NDArray djlInputs;
    private NDArray djlTargets;
    // GEMMs
    private FloatPointer a;
    private FloatPointer w;
    private FloatPointer c;

    @Setup(Level.Trial)
    public void setUp()
    {
        sizes = "small".equals(net) ? new long[] {4, 128, 128, 2} : new long[] {64, 512, 512, 16};
        batch = "small".equals(net) ? 64 : 256;
        final long in = sizes[0];
        final long out = sizes[sizes.length - 1];
        if (step.startsWith("djl"))
        {
            setUpDjl(in, out);
            return;
        }
        Threads.configure(1, 1, 1);
        torch.manual_seed(0);
        switch (step)
        {
            case "gemm" -> {
                final long widest = 512L * 512;
                a = new FloatPointer(widest).fill(1);
                w = new FloatPointer(widest).fill(1);
                c = new FloatPointer(widest).fill(1);
            }
            case "javacpp" -> {
                module = new Module("mlp");
                layers = new LinearImpl[sizes.length - 1];
                for (int i = 0; i < layers.length; i++)
                {
                    layers[i] = module.register_module(Integer.toString(2 * i), new LinearImpl(sizes[i], sizes[i + 1]));
                }
                adam = new Adam(module.parameters(), new AdamOptions(1e-3));
            }
            case "fused", "libtorch" -> {
                regressor = new MlpRegressor(Mlp.of(sizes), AdamConfig.adam(1e-3), 0);
                if ("fused".equals(step))
                {
                    regressor.fusedStep(batch);
                }
            }
            default -> throw new IllegalArgumentException("step: " + step);
        }
        inputs = torch.randn(batch, in);
        targets = torch.randn(batch, out);
    }

    private void setUpDjl(final long in, final long out)
    {
        model = Model.newInstance("mlp", Device.cpu(), "PyTorch");
        final SequentialBlock block = new SequentialBlock();
        for (int i = 1; i < sizes.length; i++)
        {
            block.add(Linear.builder().setUnits(sizes[i]).build());
            if (i + 1 < sizes.length)
            {
                block.add(Activation::relu);
            }
        }
        model.setBlock(block);
        // l2Loss's weight 1 makes it the mean squared error (its default 1/2 halves it).
        trainer = model.newTrainer(new DefaultTrainingConfig(Loss.l2Loss("L2Loss", 1))
            .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(1e-3f)).build())
            .optDevices(new Device[] {Device.cpu()}));
        trainer.initialize(new Shape(batch, in));
        manager = trainer.getManager();
        djlInputs = manager.randomNormal(new Shape(batch, in));
        djlTargets = manager.randomNormal(new Shape(batch, out));
    }

    @Benchmark
    public double step()
    {
        switch (step)
        {
            case "gemm":
                gemms();
                return 0;
            case "javacpp":
                return bareJavaCpp();
            case "djlTrainer":
                return djlTrainer();
            case "djlLoop":
                return djlLoop();
            default:
                return regressor.step(inputs, targets);
        }
    }

    private void gemms()
    {
        final int b = batch;
        for (int i = 0; i + 1 < sizes.length; i++)
        {
            final int k = (int)sizes[i];
            final int n = (int)sizes[i + 1];
            openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, TRANS, b, n, k, 1f, a, k, w, k, 0f, c, n);
        }
        for (int i = sizes.length - 2; i >= 0; i--)
        {
            final int k = (int)sizes[i];
            final int n = (int)sizes[i + 1];
            openblas_nolapack.cblas_sgemm(ROW_MAJOR, TRANS, NO_TRANS, n, k, b, 1f, c, n, a, k, 0f, w, k);
            if (0 != i)
            {
                openblas_nolapack.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, b, k, n, 1f, c, n, w, k, 0f, a, k);
            }
        }
    }

    private double bareJavaCpp()
    {
        try (PointerScope scope = new PointerScope())
        {
            adam.zero_grad();
            Tensor x = inputs;
            for (int i = 0; i < layers.length; i++)
            {
                x = layers[i].forward(x);
                if (i + 1 < layers.length)
                {
                    x = torch.relu(x);
                }
            }
            final Tensor loss = torch.mse_loss(x, targets);
            loss.backward();
            adam.step();
            return loss.item_double();
        }
    }

    private double djlTrainer()
    {
        // The batch's arrays move to a manager closed after the step, with everything the step made from them.
        try (NDManager scope = manager.newSubManager())
        {
            djlInputs.tempAttach(scope);
            djlTargets.tempAttach(scope);
            // trainBatch releases the batch's arrays, as a dataset's iterator hands out new ones each step: so it
            // gets copies (two small array copies, a few microseconds; a dataset's batchify costs more).
            EasyTrain.trainBatch(trainer, new Batch(scope, new NDList(djlInputs.duplicate()),
                new NDList(djlTargets.duplicate()), batch, Batchifier.STACK, Batchifier.STACK, 0, 0));
            trainer.step();
            return 0;
        }
    }

    private double djlLoop()
    {
        try (NDManager scope = manager.newSubManager())
        {
            djlInputs.tempAttach(scope);
            djlTargets.tempAttach(scope);
            final float loss;
            try (GradientCollector collector = trainer.newGradientCollector())
            {
                final NDArray prediction = trainer.forward(new NDList(djlInputs)).singletonOrThrow();
                final NDArray value = trainer.getLoss().evaluate(new NDList(djlTargets), new NDList(prediction));
                collector.backward(value);
                loss = value.getFloat();
            }
            trainer.step();
            return loss;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != trainer)
        {
            trainer.close();
            model.close();
            return;
        }
        if (null != regressor)
        {
            regressor.close();
        }
        if (null != module)
        {
            adam.close();
            module.close();
        }
        if (null != a)
        {
            a.close();
            w.close();
            c.close();
            return;
        }
        inputs.close();
        targets.close();
    }
}
