package org.ding4j.torch;

import org.bytedeco.pytorch.Tensor;

/**
 * Combines the gradients of all ranks in place before an optimizer step (e.g. {@code org.ding4j.dist.GradientSync}:
 * all-reduces of the flat gradient buffers). {@link FusedOptimizer#step()} calls {@link #reduce} after backward and
 * before clipping, so a clip sees the averaged gradient, as in PyTorch DDP. A reducer that {@link #overlapsBackward()}
 * is also told during backward which gradients are final already ({@link #gradientsFinal}) by the fused native
 * updates (one call per layer of backward); it can start sending those while the rest of backward runs, and
 * {@link #reduce} then waits for them. On the libtorch autograd path nothing calls {@link #gradientsFinal}: every
 * bucket starts in {@link #reduce}, after backward (libtorch's pre-accumulation tensor hooks see a gradient before it
 * reaches the flat buffer, so they cannot start its send).
 */
@FunctionalInterface
public interface GradientReducer
{
    /**
     * @param params the optimizer's parameters; their flat gradient buffers are replaced by the combined ones
     */
    void reduce(FlatParameters params);

    /**
     * Runs a libtorch backward of {@code loss} into these parameters' gradients ({@link FusedOptimizer#backward}): a
     * reducer that hooks into autograd (c10d's Reducer) arms itself for it and reduces during it; by default the
     * plain backward.
     *
     * @param loss the scalar loss
     */
    default void backward(final Tensor loss)
    {
        loss.backward();
    }

    /**
     * @return whether this reducer wants {@link #gradientsFinal} calls during backward (the fused updates then run
     * backward one layer per native call instead of in one); false by default
     */
    default boolean overlapsBackward()
    {
        return false;
    }

    /**
     * Called during backward, on the training thread: every gradient of {@code params}' group {@code group} at a
     * flat offset {@code >= from} is final for this step (calls for one step come with falling {@code from}).
     *
     * @param params the parameters being backpropagated into
     * @param group  the group's index
     * @param from   the lowest final offset (the group's element count when none is yet)
     */
    default void gradientsFinal(final FlatParameters params, final int group, final long from)
    {
    }
}
