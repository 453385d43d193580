package org.ding4j.torch;

import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.pytorch.Tensor;

/**
 * A supervised step of an {@link Mlp} (Linear layers, ReLU or Tanh between them) in one native call
 * ({@code native/ding4j_dqn.h}'s {@code mlp_step}): forward with saved activations, the {@link RegressionLoss} (MSE
 * or Huber) over all outputs with optional per-sample weights, backward into the flat gradient buffer, every
 * product through OpenBLAS's {@code cblas_sgemm}; the caller then runs its optimizer's step as usual. For a fixed
 * batch size (the workspace is sized once). Not thread-safe.
 */
public final class FusedMlpStep implements AutoCloseable
{
    private final NativeOwner natives = new NativeOwner("FusedMlpStep");
    private final long[] sizes;
    private final int batch;
    /** The MLP's values and gradients: checked before each call. */
    private final Binding net;
    private final NativeKernels.DqnStats stats;
    private final FusedNetHandle kernel;
    /** The MLP's parameters, told to a reducer that overlaps backward. */
    private final FlatParameters params;

    /**
     * A step's input, target and weight tensors, checked once and held (with their addresses) for this step only.
     * Dropping it releases them.
     */
    public static final class Batch
    {
        private static final String[] NAMES = {"inputs", "targets", "weights"};

        private final Binding tensors;

        private Batch(final FusedMlpStep owner, final Tensor x, final Tensor y, final Tensor weight)
        {
            this.tensors = new Binding(owner, "FusedMlpStep", NAMES, x, y, weight);
        }
    }

    /**
     * A step with the squared error.
     *
     * @param mlp    the model
     * @param params its flat parameters (one float32 CPU group)
     * @param batch  samples per step
     * @throws IllegalArgumentException if the parameters are not the MLP's layout, or not float32 on the CPU
     */
    public FusedMlpStep(final Mlp mlp, final FlatParameters params, final int batch)
    {
        this(mlp, params, batch, RegressionLoss.MSE);
    }

    /**
     * @param mlp    the model
     * @param params its flat parameters (one float32 CPU group)
     * @param batch  samples per step
     * @param loss   the loss
     * @throws IllegalArgumentException if the parameters are not the MLP's layout, or not float32 on the CPU
     */
    public FusedMlpStep(final Mlp mlp, final FlatParameters params, final int batch, final RegressionLoss loss)
    {
        Objects.requireNonNull(mlp, "mlp");
        Objects.requireNonNull(loss, "loss");
        if (batch < 1)
        {
            throw new IllegalArgumentException("FusedMlpStep: expected batch >= 1, got " + batch);
        }
        final Tensor values = Checks.singleCpuFloatGroup(params, "FusedMlpStep: the MLP");
        this.params = params;
        this.sizes = mlp.sizes();
        this.batch = batch;
        final int layers = sizes.length - 1;
        final List<String> names = params.names();
        final long[] offsets = new long[2 * layers];
        for (int l = 0; l < layers; l++)
        {
            for (int k = 0; k < 2; k++)
            {
                final String name = 2 * l + (0 == k ? ".weight" : ".bias");
                final int index = names.indexOf(name);
                if (index < 0)
                {
                    throw new IllegalArgumentException("FusedMlpStep: the parameters have no " + name + " (not this "
                        + "Mlp's layout: " + names + ")");
                }
                offsets[2 * l + k] = params.offset(index);
            }
        }
        final long[] dims = new long[layers + 5];
        dims[0] = layers;
        System.arraycopy(sizes, 0, dims, 1, sizes.length);
        dims[layers + 2] = batch;
        dims[layers + 3] = mlp.activation().ordinal();
        dims[layers + 4] = loss.ordinal();
        this.net = new Binding(this, "FusedMlpStep", new String[] {"the MLP's parameters", "the MLP's gradients"},
            values, params.group(0).grads());
        this.stats = natives.own(new NativeKernels.DqnStats());
        try (LongPointer d = new LongPointer(dims); LongPointer o = new LongPointer(offsets))
        {
            kernel = new FusedNetHandle("FusedMlpStep",
                NativeKernels.mlp_create(Natives.sgemmAddress(), d.address(), o.address()));
        }
    }

    /**
     * @param x inputs, contiguous CPU float32 [batch, in]
     * @param y targets, contiguous CPU float32 [batch, out]
     * @return the binding, for {@link #step}
     * @throws IllegalArgumentException naming the tensor that does not fit
     */
    public Batch bind(final Tensor x, final Tensor y)
    {
        return bind(x, y, null);
    }

    /**
     * @param x      inputs, contiguous CPU float32 [batch, in]
     * @param y      targets, contiguous CPU float32 [batch, out]
     * @param weight per-sample weights, contiguous CPU float32 [batch], or null for none
     * @return the binding, for {@link #step}
     * @throws IllegalArgumentException naming the tensor that does not fit
     */
    public Batch bind(final Tensor x, final Tensor y, final Tensor weight)
    {
        Checks.floatRows("FusedMlpStep", x, "inputs", batch, sizes[0]);
        Checks.floatRows("FusedMlpStep", y, "targets", batch, sizes[sizes.length - 1]);
        if (null != weight)
        {
            Checks.floatRows("FusedMlpStep", weight, "weights", batch, 0);
        }
        return new Batch(this, x, y, weight);
    }

    /**
     * Forward, loss and backward: the gradients are in the flat gradient buffer afterwards.
     *
     * @param b the bound batch
     * @return the loss
     * @throws IllegalArgumentException if the binding is another step's, or a tensor of it (or the MLP's buffers) was
     *                                  closed or resized since it was bound; nothing was written then
     */
    public double step(final Batch b)
    {
        return step(b, null);
    }

    /**
     * {@link #step(Batch)}, telling a reducer that {@link GradientReducer#overlapsBackward() overlaps backward}
     * after each layer's gradients which are final (backward then takes one native call per layer).
     *
     * @param b       the bound batch
     * @param reducer the optimizer's reducer, or null
     * @return the loss
     * @throws IllegalArgumentException as {@link #step(Batch)}
     */
    public double step(final Batch b, final GradientReducer reducer)
    {
        final Binding t = b.tensors;
        t.check(this);
        net.check(this);
        final boolean staged = null != reducer && reducer.overlapsBackward();
        NativeKernels.mlp_step(kernel.get(), net.address(0), net.address(1), t.address(0), t.address(1),
            t.address(2), stats.address(), staged ? 0 : 1);
        if (staged)
        {
            kernel.backwardInStages(reducer, params);
        }
        return stats.loss();
    }

    @Override
    public void close()
    {
        kernel.close();
        natives.close();
    }
}
