package org.ding4j.torch;

/**
 * Combines the gradients of all ranks in place before an optimizer step (e.g. {@code org.ding4j.dist.GradientSync}:
 * one all-reduce per flat gradient buffer). Called by {@link FusedOptimizer#step()} after backward and before
 * clipping, so a clip sees the averaged gradient, as in PyTorch DDP.
 */
@FunctionalInterface
public interface GradientReducer
{
    /**
     * @param params the optimizer's parameters; their flat gradient buffers are replaced by the combined ones
     */
    void reduce(FlatParameters params);
}
