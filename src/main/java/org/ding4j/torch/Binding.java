package org.ding4j.torch;

import org.bytedeco.pytorch.Tensor;

/**
 * Tensors a fused native call reads and writes by address, checked once when bound and again before each call: the
 * binding keeps its owner (the fused update that sized its workspace for these shapes) and the tensors themselves
 * (so that the garbage collector cannot free what an address points into), and refuses a call from another owner,
 * after a tensor was closed, or after one changed its element count (a {@code resize_} may move its storage). The
 * per-call check is a field read and one {@code numel()} per tensor: no allocation.
 * <p>
 * What it cannot see: a tensor re-pointed with {@code set_()} to other storage of the same size. Bind again after
 * that. Not thread-safe (as the fused updates).
 */
final class Binding
{
    private final Object owner;
    private final String what;
    private final String[] names;
    private final Tensor[] tensors;
    private final long[] numels;
    private final long[] addresses;

    /**
     * @param owner   the fused update that may use it
     * @param what    the owner's class name, for messages
     * @param names   each tensor's name, for messages
     * @param tensors the tensors, already checked for shape, dtype, device and contiguity; null entries are
     *                optional tensors left out (address 0)
     */
    Binding(final Object owner, final String what, final String[] names, final Tensor... tensors)
    {
        this.owner = owner;
        this.what = what;
        this.names = names;
        this.tensors = tensors.clone();
        this.numels = new long[tensors.length];
        this.addresses = new long[tensors.length];
        for (int i = 0; i < tensors.length; i++)
        {
            if (null != tensors[i])
            {
                numels[i] = tensors[i].numel();
                addresses[i] = tensors[i].data_ptr().address();
            }
        }
    }

    /**
     * @param caller the fused update about to call in
     * @throws IllegalArgumentException if the caller is not the owner, or a tensor was closed or resized since
     */
    void check(final Object caller)
    {
        if (caller != owner)
        {
            throw new IllegalArgumentException(what + ": this binding was made by another " + what
                + " (its workspace is sized for that one's batch); bind the tensors with this one");
        }
        for (int i = 0; i < tensors.length; i++)
        {
            final Tensor t = tensors[i];
            if (null == t)
            {
                continue;
            }
            if (t.isNull())
            {
                throw new IllegalArgumentException(what + ": " + names[i] + " was closed after it was bound");
            }
            final long numel = t.numel();
            if (numel != numels[i])
            {
                throw new IllegalArgumentException(what + ": " + names[i] + " has " + numel
                    + " elements, bound with " + numels[i] + " (resized since it was bound: bind it again)");
            }
        }
    }

    /**
     * @param i a tensor's position
     * @return its data address when bound (0 for a null entry)
     */
    long address(final int i)
    {
        return addresses[i];
    }
}
