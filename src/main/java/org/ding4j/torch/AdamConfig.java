package org.ding4j.torch;

/**
 * Hyper-parameters of {@link FusedAdam}, with libtorch's defaults and checks ({@code torch::optim::AdamOptions}).
 *
 * @param lr          learning rate, finite and >= 0
 * @param beta1       first-moment decay, in [0, 1)
 * @param beta2       second-moment decay, in [0, 1)
 * @param eps         added to the denominator, finite and >= 0
 * @param weightDecay finite and >= 0; L2 (added to the gradient) for Adam, decoupled for AdamW
 * @param amsgrad     keep the running maximum of the second moment
 * @param decoupled   true for AdamW's decoupled weight decay ({@code p *= 1 - lr * weightDecay})
 */
public record AdamConfig(
    double lr, double beta1, double beta2, double eps, double weightDecay, boolean amsgrad, boolean decoupled)
{
    /**
     * Checks every value.
     *
     * @throws IllegalArgumentException naming the first value that breaks its rule
     */
    public AdamConfig
    {
        Checks.nonNegativeFinite("lr", lr);
        Checks.unitInterval("beta1", beta1);
        Checks.unitInterval("beta2", beta2);
        Checks.nonNegativeFinite("eps", eps);
        Checks.nonNegativeFinite("weight_decay", weightDecay);
    }

    /**
     * Adam as libtorch defaults it: betas (0.9, 0.999), eps 1e-8, no weight decay.
     *
     * @param lr learning rate
     * @return the config
     */
    public static AdamConfig adam(final double lr)
    {
        return new AdamConfig(lr, 0.9, 0.999, 1e-8, 0.0, false, false);
    }

    /**
     * AdamW as libtorch defaults it: betas (0.9, 0.999), eps 1e-8, weight decay 1e-2.
     *
     * @param lr learning rate
     * @return the config
     */
    public static AdamConfig adamW(final double lr)
    {
        return new AdamConfig(lr, 0.9, 0.999, 1e-8, 1e-2, false, true);
    }

    /**
     * @param lr new learning rate
     * @return a copy with that learning rate
     */
    public AdamConfig withLr(final double lr)
    {
        return new AdamConfig(lr, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
    }

    /**
     * @param beta1 first-moment decay
     * @param beta2 second-moment decay
     * @return a copy with those betas
     */
    public AdamConfig withBetas(final double beta1, final double beta2)
    {
        return new AdamConfig(lr, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
    }

    /**
     * @param eps denominator term
     * @return a copy with that eps
     */
    public AdamConfig withEps(final double eps)
    {
        return new AdamConfig(lr, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
    }

    /**
     * @param weightDecay weight decay
     * @return a copy with that weight decay
     */
    public AdamConfig withWeightDecay(final double weightDecay)
    {
        return new AdamConfig(lr, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
    }

    /**
     * @param amsgrad whether to keep the maximum second moment
     * @return a copy with that setting
     */
    public AdamConfig withAmsgrad(final boolean amsgrad)
    {
        return new AdamConfig(lr, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
    }
}
