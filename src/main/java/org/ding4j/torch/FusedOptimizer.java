package org.ding4j.torch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;

/**
 * An optimizer that updates {@link FlatParameters} with one native kernel call per buffer, with optional
 * gradient-norm clipping folded into the same pass.
 * <p>
 * {@link #step()} does what {@code torch.nn.utils.clip_grad_norm_(params, maxGradNorm)} followed by
 * {@code optimizer.step()} does, except that the clipped gradient is used in the update without being written back
 * to the gradient buffer (it is zeroed before the next backward anyway).
 * <p>
 * The state is exported and imported in PyTorch's {@code optimizer.state_dict()} layout (see {@link #stateDict()}),
 * which is what checkpoints hold. Not thread-safe: the training thread owns it.
 *
 * @param <C> the hyper-parameter record
 */
public abstract sealed class FusedOptimizer<C> implements AutoCloseable permits FusedAdam, FusedSgd
{
    /** The constant {@code clip_grad_norm_} adds to the norm before dividing. */
    static final double CLIP_EPS = 1e-6;

    final FlatParameters params;
    final FlatState[] states;
    private final double maxGradNorm;
    C config;
    long stepCount;
    private GradientReducer gradientReducer;
    private boolean closed;

    FusedOptimizer(final FlatParameters params, final C config, final double maxGradNorm, final String... stateKeys)
    {
        this.params = Objects.requireNonNull(params, "params");
        this.config = Objects.requireNonNull(config, "config");
        Checks.nonNegativeFinite("max_grad_norm", maxGradNorm);
        for (int g = 0; g < params.groupCount(); g++)
        {
            final FlatParameters.Group group = params.group(g);
            Checks.cpuFloatBuffer("parameter group " + group.kind() + " values", group.values(), -1);
            Checks.cpuFloatBuffer("parameter group " + group.kind() + " grads", group.grads(), group.numel());
        }
        this.maxGradNorm = maxGradNorm;
        this.states = new FlatState[stateKeys.length];
        for (int k = 0; k < stateKeys.length; k++)
        {
            states[k] = new FlatState(stateKeys[k], params);
        }
    }

    /**
     * Combines gradients across ranks (when a {@link GradientReducer} is set), clips (when configured) and applies
     * one update to every parameter.
     *
     * @return the gradient norm before clipping when clipping is on, else NaN
     * @throws IllegalStateException if closed
     */
    public final double step()
    {
        checkOpen();
        if (null != gradientReducer)
        {
            gradientReducer.reduce(params);
        }
        float gradScale = 1.0f;
        double norm = Double.NaN;
        if (maxGradNorm > 0.0)
        {
            norm = params.gradNorm();
            final double coef = maxGradNorm / (norm + CLIP_EPS);
            // clip_grad_norm_ multiplies by min(coef, 1): a NaN norm makes NaN gradients there, and here too.
            if (!(coef >= 1.0))
            {
                gradScale = (float)coef;
            }
        }
        stepCount++;
        final FlatParameters params = this.params;
        for (int g = 0, groups = params.groupCount(); g < groups; g++)
        {
            update(g, params.group(g), gradScale);
        }
        return norm;
    }

    abstract void update(int groupIndex, FlatParameters.Group group, float gradScale);

    /**
     * Counts a step that a fused native update runs itself (its kernel reads the moments at
     * {@link #stateAddress}): allowed only where {@link #step()} would be that kernel alone, with one parameter
     * group and no clipping; a {@link #gradientReducer()}, when set, is the fused update's to run before the kernel's
     * step (as {@link FusedActorCritic} does between its stages).
     *
     * @param who the fused update, for the message
     * @return the step number the kernel must use (bias correction)
     * @throws IllegalStateException if this optimizer does more than the kernel would
     */
    final long countNativeStep(final String who)
    {
        return countNativeStep(who, false);
    }

    /**
     * Counts a step that a fused native update runs itself with this optimizer's gradient-norm clipping done as
     * {@link #step()} does it (the norm of every gradient, the same constant, the same scale): allowed with one
     * parameter group.
     *
     * @param who the fused update, for the message
     * @return the step number the kernel used
     * @throws IllegalStateException if this optimizer has more than one group
     */
    final long countNativeClippedStep(final String who)
    {
        return countNativeStep(who, true);
    }

    private long countNativeStep(final String who, final boolean kernelClips)
    {
        checkOpen();
        if ((maxGradNorm > 0.0 && !kernelClips) || 1 != params.groupCount())
        {
            throw new IllegalStateException(who + ": its optimizer must have one parameter group" + (kernelClips ? ""
                : " and no gradient clipping") + " to run inside the fused update");
        }
        return ++stepCount;
    }

    /**
     * @param key   the state's index, as the subclass passes its keys
     * @param group the parameter group
     * @return the address of that state buffer (fixed for this optimizer's life)
     */
    final long stateAddress(final int key, final int group)
    {
        return states[key].address(group);
    }

    /**
     * The libtorch autograd path's backward of {@code loss} into these parameters: through the gradient reducer when
     * one hooks into autograd ({@link GradientReducer#backward}), else {@code loss.backward()}.
     *
     * @param loss the scalar loss
     */
    public final void backward(final Tensor loss)
    {
        if (null != gradientReducer)
        {
            gradientReducer.backward(loss);
        }
        else
        {
            loss.backward();
        }
    }

    /**
     * Sets what combines gradients across ranks at the start of each {@link #step()} (null: none, the default).
     *
     * @param reducer the reducer, or null
     */
    public final void gradientReducer(final GradientReducer reducer)
    {
        this.gradientReducer = reducer;
    }

    /** @return what combines gradients across ranks, or null for none */
    public final GradientReducer gradientReducer()
    {
        return gradientReducer;
    }

    /** @return updates applied so far (libtorch's per-parameter {@code step}) */
    public final long stepCount()
    {
        return stepCount;
    }

    /** @return the gradient-norm limit, 0 when clipping is off */
    public final double maxGradNorm()
    {
        return maxGradNorm;
    }

    /** @return the parameters this optimizer updates */
    public final FlatParameters parameters()
    {
        return params;
    }

    /** @return the current learning rate */
    public abstract double lr();

    /**
     * Sets the learning rate (a scheduler's job).
     *
     * @param lr finite and >= 0
     * @throws IllegalArgumentException if lr is negative, NaN or infinite
     */
    public abstract void lr(double lr);

    /**
     * The state in PyTorch's {@code optimizer.state_dict()} layout:
     * {@code {"state": {index: {"step": Long, key: Tensor, ...}}, "param_groups": [{hyper-parameters...,
     * "params": [0, 1, ...]}]}} with parameter indices in {@link FlatParameters} order. Like PyTorch, a parameter has
     * no entry in {@code state} before the first step. The tensors are copies shaped like their parameters that
     * belong to the caller's {@link org.bytedeco.javacpp.PointerScope} (call this inside one).
     *
     * @return a mutable map in that layout
     */
    public final Map<String, Object> stateDict()
    {
        checkOpen();
        final Map<Long, Object> state = new LinkedHashMap<>();
        if (stepCount > 0)
        {
            for (int i = 0; i < params.size(); i++)
            {
                final Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("step", stepCount);
                for (final FlatState s : states)
                {
                    if (hasState(s, config))
                    {
                        entry.put(s.key(), s.export(i));
                    }
                }
                state.put((long)i, entry);
            }
        }
        final Map<String, Object> group = new LinkedHashMap<>(hyperParameters(config));
        final List<Long> indices = new ArrayList<>(params.size());
        for (int i = 0; i < params.size(); i++)
        {
            indices.add((long)i);
        }
        group.put("params", indices);
        final Map<String, Object> dict = new LinkedHashMap<>();
        dict.put("state", state);
        dict.put("param_groups", new ArrayList<>(List.of(group)));
        return dict;
    }

    /**
     * Restores a state saved by {@link #stateDict()} or by PyTorch's optimizer of the same kind over the same
     * parameters: the hyper-parameters of the saved group replace the current ones, as PyTorch's
     * {@code load_state_dict} does, and each parameter's state is copied into the flat buffers. Everything is
     * checked before anything is copied, so a bad dict leaves the optimizer as it was.
     *
     * @param dict the {@code state_dict()} layout; {@code step} may be a number or a one-element tensor
     * @throws IllegalArgumentException naming the key path of the first entry that does not fit
     */
    public final void loadStateDict(final Map<String, Object> dict)
    {
        checkOpen();
        Objects.requireNonNull(dict, "dict");
        final Map<?, ?> group = singleGroup(dict.get("param_groups"));
        final Object paramsList = group.get("params");
        if (!(paramsList instanceof List<?> indices) || indices.size() != params.size())
        {
            throw new IllegalArgumentException("param_groups.0.params: expected " + params.size()
                + " parameter indices, got " + describe(paramsList));
        }
        final Object stateObject = dict.get("state");
        if (!(stateObject instanceof Map<?, ?> state))
        {
            throw new IllegalArgumentException("state: expected a map, got " + describe(stateObject));
        }
        final C loaded = parseHyperParameters(group);
        final Tensor[][] saved = new Tensor[states.length][params.size()];
        final long step = state.isEmpty() ? 0 : checkParameterStates(state, indices, loaded, saved);

        for (int k = 0; k < states.length; k++)
        {
            if (0 == step || !hasState(states[k], loaded))
            {
                states[k].zero();
                continue;
            }
            for (int i = 0; i < params.size(); i++)
            {
                states[k].load(i, saved[k][i]);
            }
        }
        config = loaded;
        stepCount = step;
    }

    private long checkParameterStates(
        final Map<?, ?> state, final List<?> indices, final C loaded, final Tensor[][] saved)
    {
        long step = -1;
        for (int i = 0; i < params.size(); i++)
        {
            final Object savedIndex = indices.get(i);
            final Object entryObject = state.get(savedIndex);
            if (!(entryObject instanceof Map<?, ?> entry))
            {
                throw new IllegalArgumentException("state." + savedIndex + ": missing state for parameter "
                    + params.name(i) + " (a partially stepped optimizer cannot be fused)");
            }
            final long entryStep = stepOf("state." + savedIndex + ".step", entry.get("step"));
            if (step >= 0 && entryStep != step)
            {
                throw new IllegalArgumentException("state." + savedIndex + ".step: expected the same step for "
                    + "every parameter, got " + entryStep + " after " + step);
            }
            step = entryStep;
            for (int k = 0; k < states.length; k++)
            {
                if (hasState(states[k], loaded))
                {
                    final String key = "state." + savedIndex + "." + states[k].key();
                    final Object tensor = entry.get(states[k].key());
                    if (!(tensor instanceof Tensor t))
                    {
                        throw new IllegalArgumentException(key + ": expected a tensor, got " + describe(tensor));
                    }
                    states[k].checkShape(i, key, t);
                    requireUsable(key, t, states[k].key().endsWith("exp_avg_sq"));
                    saved[k][i] = t;
                }
            }
        }
        return step;
    }

    /**
     * A moment that is NaN or infinite (or a negative second moment, whose square root is NaN) would make the first
     * step after a resume write NaN into every weight: refused, as a diverged net is.
     */
    private static void requireUsable(final String key, final Tensor saved, final boolean nonNegative)
    {
        if (!Checks.allFinite(saved))
        {
            throw new IllegalArgumentException(key + ": has non-finite values (NaN or infinity); a diverged optimizer "
                + "is not loaded");
        }
        if (nonNegative && saved.numel() > 0)
        {
            try (PointerScope scope = new PointerScope())
            {
                final double least = saved.min().item_double();
                if (least < 0)
                {
                    throw new IllegalArgumentException(key + ": expected values >= 0 (a second moment), got " + least);
                }
            }
        }
    }

    private static Map<?, ?> singleGroup(final Object groups)
    {
        if (!(groups instanceof List<?> list) || 1 != list.size() || !(list.get(0) instanceof Map<?, ?> group))
        {
            throw new IllegalArgumentException(
                "param_groups: expected a list of one group map, got " + describe(groups));
        }
        return group;
    }

    private static long stepOf(final String key, final Object value)
    {
        final double step;
        if (value instanceof Number number)
        {
            step = number.doubleValue();
        }
        else if (value instanceof Tensor tensor && 1 == tensor.numel())
        {
            // PyTorch >= 1.12 saves step as a one-element float tensor.
            step = tensor.item_double();
        }
        else
        {
            throw new IllegalArgumentException(key + ": expected a step count, got " + describe(value));
        }
        if (!(step >= 1.0) || step != Math.rint(step))
        {
            throw new IllegalArgumentException(key + ": expected a whole number >= 1, got " + step);
        }
        return (long)step;
    }

    static double number(final Map<?, ?> group, final String key)
    {
        final Object value = group.get(key);
        if (!(value instanceof Number number))
        {
            throw new IllegalArgumentException("param_groups.0." + key + ": expected a number, got " + describe(value));
        }
        return number.doubleValue();
    }

    static boolean bool(final Map<?, ?> group, final String key, final boolean fallback)
    {
        final Object value = group.get(key);
        if (null == value)
        {
            return fallback;
        }
        if (!(value instanceof Boolean b))
        {
            throw new IllegalArgumentException("param_groups.0." + key + ": expected a boolean, got " + describe(value));
        }
        return b;
    }

    static String describe(final Object value)
    {
        return null == value ? "nothing" : value.getClass().getSimpleName() + " " + value;
    }

    /** @return whether this state buffer is in use under the given hyper-parameters */
    abstract boolean hasState(FlatState state, C config);

    /** @return the param group's hyper-parameters in PyTorch's names */
    abstract Map<String, Object> hyperParameters(C config);

    /** @return the hyper-parameters of a saved group, checked */
    abstract C parseHyperParameters(Map<?, ?> group);

    final void checkOpen()
    {
        if (closed)
        {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
    }

    /** Frees the state buffers; the parameters stay with their owner. */
    @Override
    public final void close()
    {
        if (!closed)
        {
            closed = true;
            for (final FlatState s : states)
            {
                s.close();
            }
        }
    }
}
