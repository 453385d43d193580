package org.ding4j.torch;

/**
 * Hyper-parameters of {@link FusedSgd}, with libtorch's checks ({@code torch::optim::SGDOptions}).
 *
 * @param lr          learning rate, finite and >= 0
 * @param momentum    finite and >= 0; 0 keeps no momentum buffer
 * @param dampening   finite and >= 0
 * @param weightDecay L2 weight decay, finite and >= 0
 * @param nesterov    Nesterov momentum; needs momentum > 0 and dampening 0
 */
public record SgdConfig(double lr, double momentum, double dampening, double weightDecay, boolean nesterov)
{
    /**
     * Checks every value.
     *
     * @throws IllegalArgumentException naming the first value that breaks its rule
     */
    public SgdConfig
    {
        Checks.nonNegativeFinite("lr", lr);
        Checks.nonNegativeFinite("momentum", momentum);
        Checks.nonNegativeFinite("dampening", dampening);
        Checks.nonNegativeFinite("weight_decay", weightDecay);
        if (nesterov && (momentum <= 0.0 || 0.0 != dampening))
        {
            throw new IllegalArgumentException("nesterov: requires momentum > 0 and dampening = 0, got momentum="
                + momentum + " dampening=" + dampening);
        }
    }

    /**
     * Plain SGD with momentum.
     *
     * @param lr       learning rate
     * @param momentum momentum factor
     * @return the config
     */
    public static SgdConfig sgd(final double lr, final double momentum)
    {
        return new SgdConfig(lr, momentum, 0.0, 0.0, false);
    }

    /**
     * @param lr new learning rate
     * @return a copy with that learning rate
     */
    public SgdConfig withLr(final double lr)
    {
        return new SgdConfig(lr, momentum, dampening, weightDecay, nesterov);
    }
}
