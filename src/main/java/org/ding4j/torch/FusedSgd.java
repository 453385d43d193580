package org.ding4j.torch;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * SGD with momentum over {@link FlatParameters}, with libtorch's {@code torch::optim::SGD} semantics: L2 weight
 * decay, a momentum buffer that starts as a copy of the first gradient, dampening, and Nesterov momentum.
 * <p>
 * The state key is PyTorch's {@code momentum_buffer}, present only when momentum is non-zero.
 * {@link #step()} allocates nothing. Not thread-safe.
 */
public final class FusedSgd extends FusedOptimizer<SgdConfig>
{
    private static final String MOMENTUM_BUFFER = "momentum_buffer";

    /**
     * Creates the optimizer.
     *
     * @param params      what it updates; every group must be CPU float32
     * @param config      hyper-parameters
     * @param maxGradNorm clip the total gradient norm to this (0 turns clipping off)
     * @throws IllegalArgumentException if a group is not CPU float32 or maxGradNorm is negative or not finite
     */
    public FusedSgd(final FlatParameters params, final SgdConfig config, final double maxGradNorm)
    {
        super(params, Objects.requireNonNull(config, "config"), maxGradNorm, MOMENTUM_BUFFER);
    }

    /**
     * Creates the optimizer without clipping.
     *
     * @param params what it updates
     * @param config hyper-parameters
     */
    public FusedSgd(final FlatParameters params, final SgdConfig config)
    {
        this(params, config, 0.0);
    }

    @Override
    void update(final int groupIndex, final FlatParameters.Group group, final float gradScale)
    {
        final SgdConfig c = config;
        NativeKernels.sgd_step(
            group.valuesAddress(), group.gradsAddress(), states[0].address(groupIndex), group.numel(), c.lr(),
            c.momentum(), c.dampening(), c.weightDecay(), c.nesterov() ? 1 : 0, 1 == stepCount ? 1 : 0, gradScale);
    }

    /** @return the hyper-parameters in force */
    public SgdConfig config()
    {
        return config;
    }

    @Override
    public double lr()
    {
        return config.lr();
    }

    @Override
    public void lr(final double lr)
    {
        config = config.withLr(lr);
    }

    @Override
    boolean hasState(final FlatState state, final SgdConfig config)
    {
        return config.momentum() > 0.0;
    }

    @Override
    Map<String, Object> hyperParameters(final SgdConfig config)
    {
        final Map<String, Object> group = new LinkedHashMap<>();
        group.put("lr", config.lr());
        group.put("momentum", config.momentum());
        group.put("dampening", config.dampening());
        group.put("weight_decay", config.weightDecay());
        group.put("nesterov", config.nesterov());
        group.put("maximize", false);
        return group;
    }

    @Override
    SgdConfig parseHyperParameters(final Map<?, ?> group)
    {
        if (bool(group, "maximize", false))
        {
            throw new IllegalArgumentException("param_groups.0.maximize: expected false, got true (not supported)");
        }
        return new SgdConfig(number(group, "lr"), number(group, "momentum"), number(group, "dampening"),
            number(group, "weight_decay"), bool(group, "nesterov", false));
    }
}
