package org.ding4j.log;

import java.util.LinkedHashMap;
import java.util.Map;

import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch.ScalarType;

/**
 * The learner's three log buffers, as DI-engine's {@code log_buffer}: {@code scalar} (name -> number),
 * {@code scalars} (name -> map of numbers) and {@code histogram} (name -> numbers). The log hooks read and clear
 * them every iteration. Single-writer: the training thread owns it.
 */
public final class LogBuffer
{
    /** Prefix of a log var that goes to {@link #scalars()}. */
    public static final String SCALARS_PREFIX = "[scalars]";
    /** Prefix of a log var that goes to {@link #histogram()}. */
    public static final String HISTOGRAM_PREFIX = "[histogram]";

    private final ScalarDict scalar = new ScalarDict();
    private final Map<String, Map<String, Double>> scalars = new LinkedHashMap<>();
    private final Map<String, double[]> histogram = new LinkedHashMap<>();

    /** @return the {@code scalar} buffer */
    public ScalarDict scalar()
    {
        return scalar;
    }

    /** @return the {@code scalars} buffer (mutable) */
    public Map<String, Map<String, Double>> scalars()
    {
        return scalars;
    }

    /** @return the {@code histogram} buffer (mutable) */
    public Map<String, double[]> histogram()
    {
        return histogram;
    }

    /**
     * Routes one DI-engine-style log var: {@code [scalars]k} to {@code scalars}, {@code [histogram]k} to
     * {@code histogram}, anything else to {@code scalar} (prefix stripped, as DI-engine splits on the last ']').
     *
     * Tensors are read as DI-engine's {@code LogDict} reads them with {@code tolist()}: a 0-d tensor is a number,
     * any other a list of its elements (row-major), which only a histogram takes.
     *
     * @param key   the log var's name
     * @param value a number, a map of numbers (scalars) or numbers (histogram); tensors as above
     * @throws IllegalArgumentException naming the key if the value does not fit its buffer
     */
    public void route(final String key, final Object value)
    {
        if (key.contains(SCALARS_PREFIX))
        {
            final String name = key.substring(key.lastIndexOf(']') + 1);
            if (!(value instanceof Map<?, ?> map))
            {
                throw new IllegalArgumentException("log var " + key + ": expected a map of numbers, got " + value);
            }
            final Map<String, Double> numbers = new LinkedHashMap<>();
            map.forEach((k, v) -> numbers.put(String.valueOf(k), number(key + "." + k, v)));
            scalars.put(name, numbers);
        }
        else if (key.contains(HISTOGRAM_PREFIX))
        {
            histogram.put(key.substring(key.lastIndexOf(']') + 1), numbers(key, value));
        }
        else
        {
            scalar.put(key, number(key, value));
        }
    }

    private static double number(final String key, final Object value)
    {
        if (value instanceof Number n)
        {
            return n.doubleValue();
        }
        if (value instanceof Tensor t && !t.isNull() && 0 == t.dim())
        {
            return t.item_double();
        }
        if (value instanceof Tensor t && !t.isNull())
        {
            throw new IllegalArgumentException("log var " + key + ": expected a number (a 0-d tensor), got a tensor of "
                + "shape " + java.util.Arrays.toString(t.sizes().vec().get()));
        }
        if (value instanceof Boolean b)
        {
            return b ? 1.0 : 0.0;
        }
        throw new IllegalArgumentException("log var " + key + ": expected a number, got "
            + (null == value ? "null" : value.getClass().getSimpleName() + " " + value));
    }

    private static double[] numbers(final String key, final Object value)
    {
        if (value instanceof Tensor t && !t.isNull())
        {
            return elements(t);
        }
        if (value instanceof double[] array)
        {
            return array.clone();
        }
        if (value instanceof float[] array)
        {
            final double[] copy = new double[array.length];
            for (int i = 0; i < array.length; i++)
            {
                copy[i] = array[i];
            }
            return copy;
        }
        if (value instanceof java.util.List<?> list)
        {
            final double[] copy = new double[list.size()];
            for (int i = 0; i < copy.length; i++)
            {
                copy[i] = number(key + "[" + i + "]", list.get(i));
            }
            return copy;
        }
        throw new IllegalArgumentException("log var " + key + ": expected numbers for a histogram, got " + value);
    }

    /** A tensor's elements as doubles, row-major, on the host (its temporaries freed here). */
    private static double[] elements(final Tensor t)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor flat = t.detach().cpu().to(ScalarType.Double).contiguous().reshape(-1);
            final double[] out = new double[(int)flat.numel()];
            new DoublePointer(flat.data_ptr()).get(out);
            return out;
        }
    }

    /** Clears all three buffers. */
    public void clear()
    {
        scalar.clear();
        scalars.clear();
        histogram.clear();
    }
}
