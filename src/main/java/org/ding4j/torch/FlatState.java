package org.ding4j.torch;

import java.util.Arrays;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * One optimizer state buffer (a moment, a momentum buffer) per {@link FlatParameters.Group}, zero at start, laid out
 * exactly as the group's value buffer, so that parameter {@code i}'s state is the same slice as its values.
 */
final class FlatState implements AutoCloseable
{
    private final String key;
    private final FlatParameters params;
    private final Owned<Tensor>[] buffers;
    private final long[] addresses;

    @SuppressWarnings("unchecked")
    FlatState(final String key, final FlatParameters params)
    {
        this.key = key;
        this.params = params;
        final int groups = params.groupCount();
        this.buffers = new Owned[groups];
        this.addresses = new long[groups];
        try (PointerScope scope = new PointerScope())
        {
            for (int g = 0; g < groups; g++)
            {
                final Tensor buffer = torch.zeros_like(params.group(g).values());
                buffers[g] = Owned.own(key + " of " + params.group(g).kind(), buffer);
                addresses[g] = buffer.data_ptr().address();
            }
        }
    }

    String key()
    {
        return key;
    }

    long address(final int group)
    {
        buffers[group].get();
        return addresses[group];
    }

    /**
     * A copy of one parameter's slice, shaped like the parameter. It belongs to the caller's
     * {@link PointerScope} when there is one (else to the GC, or to the caller's {@code close()}).
     */
    Tensor export(final int parameter)
    {
        final FlatParameters.Group group = params.groupOf(parameter);
        final Tensor buffer = buffers[group.index()].get();
        final long n = numelOf(params.shape(parameter));
        return buffer.narrow(0, params.offset(parameter), n).view(params.shape(parameter)).clone();
    }

    /**
     * Checks that a saved tensor fits one parameter's slice.
     *
     * @throws IllegalArgumentException naming the key if its dtype or shape is not the parameter's
     */
    void checkShape(final int parameter, final String keyPath, final Tensor saved)
    {
        if (null == saved || saved.isNull() || !saved.defined())
        {
            throw new IllegalArgumentException(keyPath + ": undefined tensor for parameter " + params.name(parameter));
        }
        final long[] shape = params.shape(parameter);
        final long[] savedShape = FlatParameters.shapeOf(saved);
        if (!Arrays.equals(shape, savedShape))
        {
            throw new IllegalArgumentException(keyPath + ": expected shape " + Arrays.toString(shape)
                + " for parameter " + params.name(parameter) + ", got " + Arrays.toString(savedShape));
        }
        if (!torch.isFloatingType(saved.scalar_type()))
        {
            throw new IllegalArgumentException(keyPath + ": expected a floating-point tensor, got "
                + saved.scalar_type());
        }
    }

    /** Copies a tensor that {@link #checkShape} accepted into one parameter's slice (converting its dtype). */
    void load(final int parameter, final Tensor saved)
    {
        final Tensor buffer = buffers[params.groupOf(parameter).index()].get();
        try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
        {
            buffer.narrow(0, params.offset(parameter), saved.numel()).copy_(saved.reshape(-1));
        }
    }

    /** Zeroes every buffer (a fresh state). */
    void zero()
    {
        for (int g = 0; g < buffers.length; g++)
        {
            NativeKernels.fill_zero(address(g), params.group(g).numel() * Float.BYTES);
        }
    }

    static long numelOf(final long[] shape)
    {
        long n = 1;
        for (final long d : shape)
        {
            n *= d;
        }
        return n;
    }

    @Override
    public void close()
    {
        for (final Owned<Tensor> buffer : buffers)
        {
            buffer.close();
        }
    }
}
