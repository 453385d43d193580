package org.ding4j.torch;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

import org.bytedeco.javacpp.Pointer;

/**
 * The one Java owner of a long-lived libtorch object (a module, a flat buffer, an optimizer's state):
 * it frees the native object exactly once, and any use after {@link #close()} is an {@link IllegalStateException}.
 * <p>
 * Taking ownership retains one JavaCPP reference, so a {@link org.bytedeco.javacpp.PointerScope} that the object
 * was created in does not free it when the scope closes; {@link #close()} releases that reference, which frees
 * the object once no scope holds it either. Set {@code -Dding4j.debug.recordClose=true} to have the
 * use-after-close error carry the stack of the {@code close()} call as its cause.
 * <p>
 * Thread-safe: {@code close()} may race with itself; {@link #get()} after a concurrent close fails cleanly.
 *
 * @param <T> the JavaCPP peer type
 */
public final class Owned<T extends Pointer> implements AutoCloseable
{
    private static final boolean RECORD_CLOSE = Boolean.getBoolean("ding4j.debug.recordClose");

    private final String name;
    private final AtomicReference<T> handle;
    private volatile Throwable closedAt;

    private Owned(final String name, final T pointer)
    {
        this.name = name;
        pointer.retainReference();
        this.handle = new AtomicReference<>(pointer);
    }

    /**
     * Takes ownership of a native object.
     *
     * @param name    what the object is, for error messages
     * @param pointer the object; must not be null or already freed
     * @param <T>     the peer type
     * @return its owner
     * @throws IllegalArgumentException if the pointer is null (freed)
     */
    public static <T extends Pointer> Owned<T> own(final String name, final T pointer)
    {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pointer, "pointer");
        if (pointer.isNull())
        {
            throw new IllegalArgumentException(name + ": pointer is null (already freed?)");
        }
        return new Owned<>(name, pointer);
    }

    /**
     * The owned object.
     *
     * @return the object
     * @throws IllegalStateException if this owner was closed
     */
    public T get()
    {
        final T pointer = handle.get();
        if (null == pointer)
        {
            throw new IllegalStateException(name + " is closed", closedAt);
        }
        return pointer;
    }

    /** @return true once {@link #close()} has run */
    public boolean isClosed()
    {
        return null == handle.get();
    }

    /** @return what the object is */
    public String name()
    {
        return name;
    }

    /** Frees the object; later calls do nothing. */
    @Override
    public void close()
    {
        final T pointer = handle.getAndSet(null);
        if (null != pointer)
        {
            if (RECORD_CLOSE)
            {
                closedAt = new Throwable(name + " closed here");
            }
            pointer.releaseReference();
        }
    }

    @Override
    public String toString()
    {
        return "Owned{" + name + (isClosed() ? ", closed}" : "}");
    }
}
