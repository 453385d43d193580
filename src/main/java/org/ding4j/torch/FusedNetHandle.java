package org.ding4j.torch;

/**
 * The native side of a fused net ({@code native/ding4j_dqn.h}: what {@code dqn_create} or {@code mlp_create}
 * returned, its layout and workspace), freed once by {@code dqn_free}. {@link FusedDqnUpdate} and {@link FusedMlpStep}
 * hold one each. Not thread-safe.
 */
final class FusedNetHandle implements AutoCloseable
{
    private final String owner;
    private long handle;

    /**
     * @param owner  the class that holds it, for the closed error
     * @param handle what the create function returned
     * @throws IllegalArgumentException if it is 0: the native side refused the layout
     */
    FusedNetHandle(final String owner, final long handle)
    {
        if (0 == handle)
        {
            // Java checked the sizes first; the native side's own check refusing them means the two disagree.
            throw new IllegalArgumentException(owner + ": the native kernel refused the layout (a size outside [1, "
                + "2^24], over 64 layers, or an unknown activation)");
        }
        this.owner = owner;
        this.handle = handle;
    }

    /**
     * @return the handle, for the next native call
     * @throws IllegalStateException if it was closed
     */
    long get()
    {
        if (0 == handle)
        {
            throw new IllegalStateException(owner + " is closed");
        }
        return handle;
    }

    /**
     * Runs the backward that a {@code *_begin} call set up one stage (layer) at a time, last layer first, and tells
     * the reducer after each how far the gradients are final, so that it can send those while the rest of backward
     * runs.
     *
     * @param reducer told after each stage
     * @param params  the net whose gradients backward writes (its group 0)
     */
    void backwardInStages(final GradientReducer reducer, final FlatParameters params)
    {
        final long h = get();
        for (int stage = 0, stages = NativeKernels.backward_stages(h); stage < stages; stage++)
        {
            final long from = NativeKernels.backward_stage(h, stage);
            if (from < 0)
            {
                // Only a begin call that did not finish (a refused batch) leaves the stages unset; it threw first.
                throw new IllegalStateException(owner + ": backward stage " + stage + " refused (no forward first)");
            }
            reducer.gradientsFinal(params, 0, from);
        }
    }

    @Override
    public void close()
    {
        if (0 != handle)
        {
            NativeKernels.dqn_free(handle);
            handle = 0;
        }
    }
}
