package org.ding4j.torch;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * The loss of a supervised step ({@link MlpRegressor}, {@link FusedMlpStep}): each element's term, averaged over all
 * elements, each sample's terms optionally weighted. The ordinal is the code {@code native/ding4j_dqn.h} reads.
 */
public enum RegressionLoss
{
    /** Squared error, as {@code torch.nn.functional.mse_loss}. */
    MSE,
    /** Huber's loss with delta 1 ({@code 0.5 d^2} within 1, {@code |d| - 0.5} beyond), as {@code huber_loss}. */
    HUBER;

    /** libtorch's {@code at::Reduction::None} and {@code Mean}. */
    private static final long REDUCTION_NONE = 0;
    private static final long REDUCTION_MEAN = 1;

    /**
     * The loss through libtorch (the autograd path).
     *
     * @param prediction [batch, out]
     * @param target     [batch, out]
     * @param weight     [batch] per-sample weights, or null for none
     * @return the scalar loss, in the caller's scope
     * @throws IllegalArgumentException if the weights are not one per sample ({@code [batch]})
     */
    public Tensor of(final Tensor prediction, final Tensor target, final Tensor weight)
    {
        if (null == weight)
        {
            return MSE == this ? torch.mse_loss(prediction, target)
                : torch.huber_loss(prediction, target, REDUCTION_MEAN, 1.0);
        }
        if (1 != weight.dim() || weight.size(0) != prediction.size(0))
        {
            // [batch, 1] would broadcast to [batch, batch, out] after unsqueeze: a wrong loss, and no error.
            throw new IllegalArgumentException("weights: expected one per sample, shape [" + prediction.size(0)
                + "], got " + Checks.shape(weight));
        }
        final Tensor terms;
        if (MSE == this)
        {
            final Tensor d = prediction.sub(target);
            terms = d.mul(d);
        }
        else
        {
            terms = torch.huber_loss(prediction, target, REDUCTION_NONE, 1.0);
        }
        return terms.mul(weight.unsqueeze(1)).mean();
    }
}
