package org.ding4j.torch;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.Pointer;

/**
 * The one owner of a Java object's long-lived native fields (tensors, modules, scalars, buffers): {@link #own}
 * retains one JavaCPP reference per object, so a {@link org.bytedeco.javacpp.PointerScope} that is open while the
 * object is built (a caller's scope) does not free them when it closes; {@link #close()} releases them, newest
 * first, exactly once. This is {@link Owned} for a class with many native fields that it reads on the hot path
 * without a {@code get()} per use.
 * <p>
 * Not thread-safe: fill it in the constructor, close it once from the owner's {@code close()}.
 */
public final class NativeOwner implements AutoCloseable
{
    private final String name;
    private final List<Pointer> pointers = new ArrayList<>();
    private boolean closed;

    /** @param name what owns the objects, for error messages */
    public NativeOwner(final String name)
    {
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * Takes ownership of a native object.
     *
     * @param pointer the object; must not be null or already freed
     * @param <T>     its type
     * @return the object
     * @throws IllegalArgumentException if the pointer is null (freed)
     * @throws IllegalStateException    if this owner was closed
     */
    public <T extends Pointer> T own(final T pointer)
    {
        Objects.requireNonNull(pointer, "pointer");
        if (closed)
        {
            throw new IllegalStateException(name + " is closed");
        }
        if (pointer.isNull())
        {
            throw new IllegalArgumentException(name + ": pointer is null (already freed?)");
        }
        pointer.retainReference();
        pointers.add(pointer);
        return pointer;
    }

    /** @return whether {@link #close()} ran */
    public boolean isClosed()
    {
        return closed;
    }

    /** Releases every owned object, newest first; later calls do nothing. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (int i = pointers.size() - 1; i >= 0; i--)
        {
            pointers.get(i).releaseReference();
        }
        pointers.clear();
    }
}
