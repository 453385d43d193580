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
