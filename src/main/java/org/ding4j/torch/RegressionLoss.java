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

    /** libtorch's {@code at::Reduction::None}. */
    private static final long REDUCTION_NONE = 0;

    /**
     * The loss through libtorch (the autograd path).
     *
     * @param prediction [batch, out]
     * @param target     [batch, out]
     * @param weight     [batch] per-sample weights, or null for none
     * @return the scalar loss, in the caller's scope
     */
    public Tensor of(final Tensor prediction, final Tensor target, final Tensor weight)
    {
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
        return null == weight ? terms.mean() : terms.mul(weight.unsqueeze(1)).mean();
    }
}
