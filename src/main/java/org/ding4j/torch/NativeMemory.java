package org.ding4j.torch;

/**
 * What native memory the process holds, for leak checks: RSS hides a leak behind memory that was freed earlier
 * and kept by the allocator for reuse, the allocator's own count does not.
 */
public final class NativeMemory
{
    private NativeMemory()
    {
    }

    /**
     * @return bytes the C allocator (glibc malloc, which libtorch's CPU allocator uses) has handed out and not taken
     *         back, or -1 where the platform does not say
     */
    public static long mallocInUseBytes()
    {
        return NativeKernels.malloc_in_use_bytes();
    }
}
