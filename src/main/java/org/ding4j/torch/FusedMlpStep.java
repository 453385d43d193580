package org.ding4j.torch;

import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.pytorch.Tensor;

/**
 * A supervised step of an {@link Mlp} (Linear layers, ReLU between them) in one native call
 * ({@code native/ding4j_dqn.h}'s {@code mlp_step}): forward with saved activations, MSE over all outputs (as
 * {@code torch::mse_loss}), backward into the flat gradient buffer, every product through OpenBLAS's
 * {@code cblas_sgemm}; the caller then runs its optimizer's step as usual. For a fixed batch size (the workspace is
 * sized once). Not thread-safe.
 */
public final class FusedMlpStep implements AutoCloseable
{
    private final NativeOwner natives = new NativeOwner("FusedMlpStep");
    private final long[] sizes;
    private final int batch;
    private final long params;
    private final long grads;
    private final DoublePointer stats;
    private long handle;

    /** A step's input and target tensors, checked once and held by address. */
    public static final class Batch
    {
        private final long x;
        private final long y;

        private Batch(final long x, final long y)
        {
            this.x = x;
            this.y = y;
        }
    }

    /**
     * @param mlp    the model
     * @param params its flat parameters (one float32 CPU group)
     * @param batch  samples per step
     * @throws IllegalArgumentException if the parameters are not the MLP's layout, or not float32 on the CPU
     */
    public FusedMlpStep(final Mlp mlp, final FlatParameters params, final int batch)
    {
        Objects.requireNonNull(mlp, "mlp");
        if (batch < 1)
        {
            throw new IllegalArgumentException("FusedMlpStep: expected batch >= 1, got " + batch);
        }
        final Tensor values = Checks.singleCpuFloatGroup(params, "FusedMlpStep: the MLP");
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
        final long[] dims = new long[layers + 3];
        dims[0] = layers;
        System.arraycopy(sizes, 0, dims, 1, sizes.length);
        dims[layers + 2] = batch;
        this.params = values.data_ptr().address();
        this.grads = params.group(0).grads().data_ptr().address();
        this.stats = natives.own(new DoublePointer(1));
        try (LongPointer d = new LongPointer(dims); LongPointer o = new LongPointer(offsets))
        {
            handle = NativeKernels.mlp_create(Natives.sgemmAddress(), d.address(), o.address());
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
        check(x, "inputs", sizes[0]);
        check(y, "targets", sizes[sizes.length - 1]);
        return new Batch(x.data_ptr().address(), y.data_ptr().address());
    }

    private void check(final Tensor t, final String name, final long width)
    {
        if (t.isNull() || t.is_cuda() || !t.is_contiguous() || 2 != t.dim() || t.size(0) != batch
            || t.size(1) != width || !Checks.isFloat32(t))
        {
            throw new IllegalArgumentException("FusedMlpStep: " + name + " must be a contiguous CPU float32 tensor of ["
                + batch + ", " + width + "]");
        }
    }

    /**
     * Forward, MSE and backward: the gradients are in the flat gradient buffer afterwards.
     *
     * @param b the bound batch
     * @return the loss
     */
    public double step(final Batch b)
    {
        if (0 == handle)
        {
            throw new IllegalStateException("FusedMlpStep is closed");
        }
        NativeKernels.mlp_step(handle, params, grads, b.x, b.y, stats.address());
        return stats.get(0);
    }

    @Override
    public void close()
    {
        if (0 != handle)
        {
            NativeKernels.dqn_free(handle);
            handle = 0;
        }
        natives.close();
    }
}
