package org.ding4j.serve;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.Consumer;

import org.ding4j.torch.NativeFloats;

/**
 * A single writer's float vector (a net's weights, packed for a native forward) for any number of reader threads,
 * without locks and without torn reads: a seqlock over two {@link NativeFloats} buffers. The writer fills the buffer readers are not directed to, with its
 * version odd while it writes, then directs readers to it. A reader takes a stamp ({@link #tryRead}), reads the
 * stamped buffer, and keeps what it computed only if {@link #validate} says the buffer was not rewritten meanwhile
 * (that takes two publishes during one read); else it reads again. As {@link java.util.concurrent.locks.StampedLock}'s
 * optimistic reads, but a reader never waits for a writer that is filling the other buffer, and nothing allocates.
 * <p>
 * Thread contract: {@link #publish} from one thread at a time (the training thread); the read methods from any.
 */
public final class PublishedWeights
{
    private static final VarHandle VERSIONS = MethodHandles.arrayElementVarHandle(long[].class);
    /** Versions at indices 0 and 8: a cache line apart, so a reader of one does not share a line with the other. */
    private static final int STRIDE = 8;

    private final NativeFloats[] buffers;
    private final long[] versions = new long[2 * STRIDE];
    private volatile int current;
    /** Publishes complete and served (written after {@link #current}, so a reader that sees it gets that publish). */
    private volatile long completed;

    /** @param size floats in the vector */
    public PublishedWeights(final int size)
    {
        if (size < 1)
        {
            throw new IllegalArgumentException("size: expected >= 1, got " + size);
        }
        buffers = new NativeFloats[] {new NativeFloats(size), new NativeFloats(size)};
    }

    /** @return floats in the vector */
    public int size()
    {
        return buffers[0].size();
    }

    /**
     * Publishes what {@code fill} writes (a packing of the training net's weights, say).
     *
     * @param fill writes the whole vector into the buffer it is given, and nothing else; called on this thread
     */
    public void publish(final Consumer<NativeFloats> fill)
    {
        Objects.requireNonNull(fill, "fill");
        final int next = begin();
        try
        {
            fill.accept(buffers[next]);
        }
        catch (final RuntimeException | Error ex)
        {
            abort(next);
            throw ex;
        }
        end(next);
    }

    /**
     * Publishes a copy of {@code source}.
     *
     * @param source the weights, {@link #size()} floats
     */
    public void publish(final float[] source)
    {
        if (source.length != size())
        {
            throw new IllegalArgumentException("source: expected " + size() + " floats, got " + source.length);
        }
        final int next = begin();
        buffers[next].view().put(0, source);
        end(next);
    }

    private int begin()
    {
        final int next = 1 - current;
        final int at = next * STRIDE;
        VERSIONS.setVolatile(versions, at, (long)VERSIONS.getVolatile(versions, at) + 1);
        // The odd version must be visible before any store into the buffer (a reader that saw the even one would
        // otherwise validate a half-written buffer).
        VarHandle.storeStoreFence();
        return next;
    }

    private void end(final int next)
    {
        final int at = next * STRIDE;
        // Release: the buffer's stores come before the even version, and the version before the redirect.
        VERSIONS.setRelease(versions, at, (long)VERSIONS.getVolatile(versions, at) + 1);
        current = next;
        completed++;
    }

    /**
     * A copy that failed halfway: the buffer's version turns even again (a stamp taken before it no longer
     * validates) and readers stay on the other buffer, so the next publish starts from a consistent state.
     */
    private void abort(final int next)
    {
        final int at = next * STRIDE;
        VERSIONS.setRelease(versions, at, (long)VERSIONS.getVolatile(versions, at) + 1);
    }

    /**
     * @return a stamp for {@link #buffer} and {@link #validate}: the buffer readers are directed to and its
     *     version; -1 if that buffer is being rewritten (the reader asks again)
     */
    public long tryRead()
    {
        final int index = current;
        final long version = (long)VERSIONS.getVolatile(versions, index * STRIDE);
        return 0 != (version & 1) ? -1 : (version << 1) | index;
    }

    /**
     * @param stamp from {@link #tryRead}
     * @return the stamped buffer, read-only: read it, then {@link #validate} the stamp before trusting what was read
     */
    public NativeFloats buffer(final long stamp)
    {
        return buffers[(int)(stamp & 1)];
    }

    /**
     * @param stamp from {@link #tryRead}
     * @return whether the stamped buffer was not rewritten since the stamp was taken (what was read is whole)
     */
    public boolean validate(final long stamp)
    {
        // The buffer's loads must complete before the version is read again.
        VarHandle.acquireFence();
        return (long)VERSIONS.getVolatile(versions, (int)(stamp & 1) * STRIDE) == stamp >>> 1;
    }

    /**
     * @return how many publishes have completed (0 before the first); a read that starts after seeing a count gets
     *     that publish or a later one
     */
    public long version()
    {
        return completed;
    }
}
