package org.ding4j.torch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

import org.bytedeco.javacpp.Pointer;

/**
 * A float vector outside the Java heap that native kernels read and write in place: a direct buffer aligned to 64
 * bytes (one cache line, one AVX-512 register), freed with the object by the garbage collector (no close, no native
 * allocator call of ding4j's own). Java reads and writes it through {@link #view()}.
 * <p>
 * Thread contract: none of its own; whoever shares one between threads orders their accesses (as
 * {@link org.ding4j.serve.PublishedWeights} does).
 */
public final class NativeFloats
{
    private static final int ALIGN = 64;
    /** The most floats one vector holds: a direct buffer's int capacity, less the alignment slack. */
    public static final int MAX_SIZE = (Integer.MAX_VALUE - 2 * ALIGN) / Float.BYTES;

    private final FloatBuffer view;
    private final long address;
    private final int size;

    /** @param size floats, >= 1 */
    public NativeFloats(final int size)
    {
        if (size < 1 || size > MAX_SIZE)
        {
            throw new IllegalArgumentException("size: expected 1 to " + MAX_SIZE + " floats, got " + size);
        }
        // alignedSlice rounds the capacity down to whole lines: a whole line more than the vector's lines.
        final int lines = (size * Float.BYTES + ALIGN - 1) / ALIGN;
        final ByteBuffer bytes = ByteBuffer.allocateDirect((lines + 1) * ALIGN).alignedSlice(ALIGN)
            .order(ByteOrder.nativeOrder());
        this.view = bytes.asFloatBuffer();
        this.address = new Pointer(bytes).address();
        this.size = size;
    }

    /** @return floats in the vector */
    public int size()
    {
        return size;
    }

    /** @return the vector, for absolute gets and puts (its position and limit are not the vector's business) */
    public FloatBuffer view()
    {
        return view;
    }

    /** @return where the first float is (valid while this object is reachable) */
    long address()
    {
        return address;
    }
}
