package org.ding4j.torch;

import java.util.List;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/** Argument checks shared by the native boundary; each message names the value and the rule it breaks. */
final class Checks
{
    private Checks()
    {
    }

    static void nonNegativeFinite(final String name, final double value)
    {
        if (!(value >= 0.0) || Double.isInfinite(value))
        {
            throw new IllegalArgumentException(name + ": expected a finite number >= 0, got " + value);
        }
    }

    static void unitInterval(final String name, final double value)
    {
        if (!(value >= 0.0 && value < 1.0))
        {
            throw new IllegalArgumentException(name + ": expected a number in [0, 1), got " + value);
        }
    }

    /** JavaCPP enums returned from native code are not the interned constants: compare their values. */
    static boolean isFloat32(final Tensor t)
    {
        return torch.ScalarType.Float.value == t.scalar_type().value;
    }

    /** @return whether every value of the tensor is finite (no NaN, no infinity: what a diverged update leaves) */
    static boolean allFinite(final Tensor t)
    {
        try (PointerScope scope = new PointerScope())
        {
            return torch.isfinite(t).all().item_bool();
        }
    }

    /** @return a tensor's shape as an error message shows it: {@code [8, 4]} */
    static String shape(final Tensor t)
    {
        return java.util.Arrays.toString(t.sizes().vec().get());
    }

    /** @return a tensor as an error message shows it: {@code float32 [8, 4] on cpu, contiguous} */
    static String describe(final Tensor t)
    {
        final int type = t.scalar_type().value;
        final String dtype = torch.ScalarType.Float.value == type ? "float32" : torch.ScalarType.Long.value == type
            ? "int64" : torch.ScalarType.Double.value == type ? "float64" : "scalar type " + type;
        return dtype + " " + shape(t) + " on " + (t.is_cuda() ? "cuda" : "cpu")
            + (t.is_contiguous() ? ", contiguous" : ", not contiguous");
    }

    /**
     * The one float32 CPU buffer of a net's flat parameters, as the fused updates need it.
     *
     * @param params the flat parameters
     * @param what   who asks and for which net, for the message (e.g. "FusedDqnUpdate: the target net")
     * @return the values buffer
     * @throws IllegalArgumentException if there is more than one group, or it is not float32 on the CPU
     */
    static Tensor singleCpuFloatGroup(final FlatParameters params, final String what)
    {
        if (1 != params.groupCount())
        {
            throw new IllegalArgumentException(what + "'s parameters must be one group (one dtype and device), got "
                + params.groupCount());
        }
        final Tensor values = params.group(0).values();
        if (values.is_cuda() || !isFloat32(values))
        {
            throw new IllegalArgumentException(what + " must be float32 on the CPU");
        }
        return values;
    }

    /**
     * Checks that a tensor is a buffer the native kernels can take: defined, CPU, float32, contiguous, and of the
     * expected length (the first buffer's, or any positive length when {@code numel} is negative).
     *
     * @return the tensor's element count
     */
    static long cpuFloatBuffer(final String name, final Tensor t, final long numel)
    {
        if (null == t || t.isNull() || !t.defined())
        {
            throw new IllegalArgumentException(name + ": undefined tensor");
        }
        if (!t.is_cpu())
        {
            throw new IllegalArgumentException(name + ": expected a CPU tensor, got device " + t.device().str()
                .getString() + " (the CUDA kernels are built by cppbuild.sh --cuda)");
        }
        if (!isFloat32(t))
        {
            throw new IllegalArgumentException(name + ": expected dtype Float, got " + t.scalar_type());
        }
        if (!t.is_contiguous())
        {
            throw new IllegalArgumentException(name + ": expected a contiguous tensor, got a strided view"
                + " (call contiguous() or flatten the parameters with FlatParameters)");
        }
        final long n = t.numel();
        if (0 == n)
        {
            throw new IllegalArgumentException(name + ": zero-length buffer");
        }
        if (numel >= 0 && n != numel)
        {
            throw new IllegalArgumentException(name + ": expected numel=" + numel + ", got numel=" + n);
        }
        return n;
    }

    /**
     * A batch tensor a fused kernel reads by address: contiguous CPU float32 of {@code [rows]} (width 0) or
     * {@code [rows, width]}.
     *
     * @param who   the fused update, for the message
     * @param t     the tensor
     * @param name  its name, for the message
     * @param rows  the rows it must have
     * @param width 0 for a vector, else the columns it must have
     * @throws IllegalArgumentException naming the tensor, the shape it needs and what it is
     */
    static void floatRows(final String who, final Tensor t, final String name, final long rows, final long width)
    {
        if (null == t || t.isNull() || t.is_cuda() || !t.is_contiguous() || !isFloat32(t)
            || (0 == width ? 1 != t.dim() : 2 != t.dim() || t.size(1) != width) || t.size(0) != rows)
        {
            throw new IllegalArgumentException(who + ": " + name + " must be a contiguous CPU float32 tensor of ["
                + rows + (0 == width ? "" : ", " + width) + "], got " + (null == t ? "none" : t.isNull()
                ? "a closed tensor" : describe(t)));
        }
    }

    /**
     * The offsets of weight and bias of each layer of the net under {@code prefix}, each parameter's shape checked
     * against the widths ({@code Mlp}'s names: {@code 0.weight}, {@code 0.bias}, {@code 2.weight}, ...).
     */
    static long[] layerOffsets(final String who, final FlatParameters params, final String prefix,
        final long[] sizes, final String what)
    {
        singleCpuFloatGroup(params, who + ": the " + what);
        final List<String> names = params.names();
        final long[] offsets = new long[2 * (sizes.length - 1)];
        for (int l = 0; l + 1 < sizes.length; l++)
        {
            for (int k = 0; k < 2; k++)
            {
                final String name = prefix + 2 * l + (0 == k ? ".weight" : ".bias");
                final int index = names.indexOf(name);
                final long[] expected = 0 == k ? new long[] {sizes[l + 1], sizes[l]} : new long[] {sizes[l + 1]};
                if (index < 0 || !java.util.Arrays.equals(expected, params.shape(index)))
                {
                    throw new IllegalArgumentException(who + ": the " + what + " needs " + name + " of shape "
                        + java.util.Arrays.toString(expected) + ", got " + (index < 0 ? "none (" + names + ")"
                        : java.util.Arrays.toString(params.shape(index))));
                }
                offsets[2 * l + k] = params.offset(index);
            }
        }
        return offsets;
    }
}
