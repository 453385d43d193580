package org.ding4j.torch;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Adam and AdamW over {@link FlatParameters}: one native pass per buffer does what libtorch's
 * {@code torch::optim::Adam} / {@code AdamW} does with five to seven tensor ops per parameter, with the same
 * bias correction, eps placement (after dividing by {@code sqrt(1 - beta2^t)}), weight-decay form and step count.
 * <p>
 * State keys are PyTorch's: {@code exp_avg}, {@code exp_avg_sq}, and {@code max_exp_avg_sq} with AMSGrad.
 * {@link #step()} allocates nothing. Not thread-safe.
 */
public final class FusedAdam extends FusedOptimizer<AdamConfig>
{
    private static final String EXP_AVG = "exp_avg";
    private static final String EXP_AVG_SQ = "exp_avg_sq";
    private static final String MAX_EXP_AVG_SQ = "max_exp_avg_sq";

    /**
     * Creates the optimizer with zero moments.
     *
     * @param params      what it updates; every group must be CPU float32
     * @param config      hyper-parameters
     * @param maxGradNorm clip the total gradient norm to this (0 turns clipping off)
     * @throws IllegalArgumentException if a group is not CPU float32 or maxGradNorm is negative or not finite
     */
    public FusedAdam(final FlatParameters params, final AdamConfig config, final double maxGradNorm)
    {
        super(params, Objects.requireNonNull(config, "config"), maxGradNorm, EXP_AVG, EXP_AVG_SQ, MAX_EXP_AVG_SQ);
    }

    /**
     * Creates the optimizer without clipping.
     *
     * @param params what it updates
     * @param config hyper-parameters
     */
    public FusedAdam(final FlatParameters params, final AdamConfig config)
    {
        this(params, config, 0.0);
    }

    @Override
    void update(final int groupIndex, final FlatParameters.Group group, final float gradScale)
    {
        final AdamConfig c = config;
        NativeKernels.adam_step(
            group.valuesAddress(), group.gradsAddress(), states[0].address(groupIndex),
            states[1].address(groupIndex), states[2].address(groupIndex), group.numel(), c.lr(), c.beta1(),
            c.beta2(), c.eps(), c.weightDecay(), stepCount, c.amsgrad() ? 1 : 0, c.decoupled() ? 1 : 0, gradScale);
    }

    /** @return the hyper-parameters in force */
    public AdamConfig config()
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
    boolean hasState(final FlatState state, final AdamConfig config)
    {
        return config.amsgrad() || !MAX_EXP_AVG_SQ.equals(state.key());
    }

    @Override
    Map<String, Object> hyperParameters(final AdamConfig config)
    {
        final Map<String, Object> group = new LinkedHashMap<>();
        group.put("lr", config.lr());
        group.put("betas", List.of(config.beta1(), config.beta2()));
        group.put("eps", config.eps());
        group.put("weight_decay", config.weightDecay());
        group.put("amsgrad", config.amsgrad());
        group.put("maximize", false);
        return group;
    }

    @Override
    AdamConfig parseHyperParameters(final Map<?, ?> group)
    {
        final Object betas = group.get("betas");
        if (!(betas instanceof List<?> pair) || 2 != pair.size()
            || !(pair.get(0) instanceof Number beta1) || !(pair.get(1) instanceof Number beta2))
        {
            throw new IllegalArgumentException(
                "param_groups.0.betas: expected a pair of numbers, got " + describe(betas));
        }
        if (bool(group, "maximize", false))
        {
            throw new IllegalArgumentException("param_groups.0.maximize: expected false, got true (not supported)");
        }
        return new AdamConfig(number(group, "lr"), beta1.doubleValue(), beta2.doubleValue(), number(group, "eps"),
            number(group, "weight_decay"), bool(group, "amsgrad", false), config.decoupled());
    }
}
