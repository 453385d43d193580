package org.ding4j.torch;

import java.util.Objects;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;

/**
 * A whole supervised update of an {@link Mlp}: zero the flat gradients, forward, loss (MSE or Huber, optionally
 * weighted per sample: {@link RegressionLoss}), backward, one fused
 * optimizer step. It is the smallest real training loop on the native core: the smoke run, the leak test and the
 * update benchmarks all drive it.
 * <p>
 * Each {@link #step} runs inside its own {@link PointerScope}, so every temporary tensor JavaCPP hands back
 * (activations, the loss, autograd's intermediates) is freed when the step returns instead of waiting for the GC.
 * That is the per-step idiom every training loop in ding4j follows. Not thread-safe.
 */
public final class MlpRegressor implements AutoCloseable
{
    private final Mlp mlp;
    private final FlatParameters params;
    private final FusedOptimizer<?> optimizer;
    private final RegressionLoss loss;
    private FusedMlpStep fused;
    /** The fused step's last binding and the tensors it was made for: the same tensors again reuse it. */
    private FusedMlpStep.Batch binding;
    private Tensor boundInputs;
    private Tensor boundTargets;
    private Tensor boundWeights;

    /**
     * Takes ownership of a module and builds its flat parameters and optimizer.
     *
     * @param mlp         the model; closed with this regressor
     * @param adam        Adam/AdamW hyper-parameters
     * @param maxGradNorm gradient clipping limit, 0 for none
     */
    public MlpRegressor(final Mlp mlp, final AdamConfig adam, final double maxGradNorm)
    {
        this(mlp, adam, maxGradNorm, RegressionLoss.MSE);
    }

    /**
     * Takes ownership of a module and builds its flat parameters and optimizer.
     *
     * @param mlp         the model; closed with this regressor
     * @param adam        Adam/AdamW hyper-parameters
     * @param maxGradNorm gradient clipping limit, 0 for none
     * @param loss        the loss
     */
    public MlpRegressor(final Mlp mlp, final AdamConfig adam, final double maxGradNorm, final RegressionLoss loss)
    {
        this.mlp = Objects.requireNonNull(mlp, "mlp");
        this.loss = Objects.requireNonNull(loss, "loss");
        this.params = FlatParameters.of(mlp.module());
        this.optimizer = new FusedAdam(params, adam, maxGradNorm);
    }

    /**
     * One update on a batch.
     *
     * @param inputs  [batch, in]
     * @param targets [batch, out]
     * @return the loss before the update
     */
    public double step(final Tensor inputs, final Tensor targets)
    {
        return step(inputs, targets, null);
    }

    /**
     * One update on a batch with per-sample weights. On the fused path the tensors are checked and bound when they
     * are not the objects of the previous step, so a caller that refills the same tensors each step (e.g.
     * {@code copy_}) allocates nothing; such a tensor must keep its storage while it is bound: no {@code put}
     * (assignment shares another tensor's storage), {@code resize_} or {@code set_} on it, and it must not be
     * closed (a closed one is refused).
     *
     * @param inputs  [batch, in]
     * @param targets [batch, out]
     * @param weights [batch], or null for none
     * @return the loss before the update
     */
    public double step(final Tensor inputs, final Tensor targets, final Tensor weights)
    {
        if (null != fused)
        {
            // isNull: a closed tensor's address is 0 (a Java-side check, no native call).
            if (null == binding || inputs != boundInputs || targets != boundTargets || weights != boundWeights
                || inputs.isNull() || targets.isNull() || (null != weights && weights.isNull()))
            {
                binding = fused.bind(inputs, targets, weights);
                boundInputs = inputs;
                boundTargets = targets;
                boundWeights = weights;
            }
            final double value = fused.step(binding, optimizer.gradientReducer());
            optimizer.step();
            return value;
        }
        try (PointerScope scope = new PointerScope())
        {
            params.zeroGrad();
            final Tensor value = loss.of(mlp.forward(inputs), targets, weights);
            optimizer.backward(value);
            optimizer.step();
            return value.item_double();
        }
    }

    /**
     * Runs each step's forward and backward as one native call ({@link FusedMlpStep}) for batches of this size from
     * now on; 0 goes back to libtorch autograd. The optimizer step is the same either way.
     *
     * @param batch the batch size the steps will have, or 0
     * @throws IllegalArgumentException if the batch is negative
     */
    public void fusedStep(final int batch)
    {
        if (batch < 0)
        {
            throw new IllegalArgumentException("batch: expected >= 0, got " + batch);
        }
        if (null != fused)
        {
            fused.close();
            fused = null;
        }
        binding = null;
        boundInputs = null;
        boundTargets = null;
        boundWeights = null;
        if (batch > 0)
        {
            fused = new FusedMlpStep(mlp, params, batch, loss);
        }
    }

    /** @return the model */
    public Mlp mlp()
    {
        return mlp;
    }

    /** @return the flat parameters */
    public FlatParameters parameters()
    {
        return params;
    }

    /** @return the optimizer */
    public FusedOptimizer<?> optimizer()
    {
        return optimizer;
    }

    /** Frees the optimizer state, the flat buffers and the module. */
    @Override
    public void close()
    {
        if (null != fused)
        {
            fused.close();
        }
        optimizer.close();
        params.close();
        mlp.close();
    }
}
