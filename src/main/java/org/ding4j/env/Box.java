package org.ding4j.env;

import java.util.Arrays;
import java.util.Objects;

/**
 * Gymnasium's {@code Box(low, high, shape)}: real vectors with a lower and an upper bound per entry (either may be
 * infinite), laid out row-major in {@link #flatSize()} floats. Immutable; the arrays it returns are copies.
 */
public final class Box implements Space
{
    private final float[] low;
    private final float[] high;
    private final int[] shape;

    /**
     * @param low   the lower bound of each entry, row-major
     * @param high  the upper bound of each entry, {@code >= low}
     * @param shape the dimensions; their product is the number of entries
     * @throws IllegalArgumentException naming the entry whose bounds are NaN or crossed, or a shape that does not fit
     */
    public Box(final float[] low, final float[] high, final int... shape)
    {
        Objects.requireNonNull(low, "low");
        Objects.requireNonNull(high, "high");
        Objects.requireNonNull(shape, "shape");
        long size = 1;
        for (final int d : shape)
        {
            if (d < 1)
            {
                throw new IllegalArgumentException("Box: expected dimensions >= 1, got shape "
                    + Arrays.toString(shape));
            }
            size *= d;
        }
        if (0 == shape.length || size != low.length || size != high.length)
        {
            throw new IllegalArgumentException("Box: shape " + Arrays.toString(shape) + " needs " + size
                + " bounds each, got " + low.length + " low and " + high.length + " high");
        }
        for (int i = 0; i < low.length; i++)
        {
            if (Float.isNaN(low[i]) || Float.isNaN(high[i]) || low[i] > high[i])
            {
                throw new IllegalArgumentException("Box: entry " + i + ": expected low <= high, got low " + low[i]
                    + " high " + high[i]);
            }
        }
        this.low = low.clone();
        this.high = high.clone();
        this.shape = shape.clone();
    }

    /**
     * @param low   every entry's lower bound
     * @param high  every entry's upper bound
     * @param shape the dimensions
     * @return a box with the same bounds for every entry
     */
    public static Box of(final double low, final double high, final int... shape)
    {
        final int size = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        final float[] lo = new float[Math.max(size, 0)];
        final float[] hi = new float[lo.length];
        Arrays.fill(lo, (float)low);
        Arrays.fill(hi, (float)high);
        return new Box(lo, hi, shape);
    }

    @Override
    public int flatSize()
    {
        return low.length;
    }

    /** @return the dimensions (a copy) */
    public int[] shape()
    {
        return shape.clone();
    }

    /** @return the lower bounds (a copy) */
    public float[] low()
    {
        return low.clone();
    }

    /** @return the upper bounds (a copy) */
    public float[] high()
    {
        return high.clone();
    }

    /** @return entry {@code i}'s lower bound */
    public float low(final int i)
    {
        return low[i];
    }

    /** @return entry {@code i}'s upper bound */
    public float high(final int i)
    {
        return high[i];
    }

    /** @return whether every entry has finite bounds on both sides (what a squashing or scaling actor needs) */
    public boolean isBounded()
    {
        for (int i = 0; i < low.length; i++)
        {
            if (Float.isInfinite(low[i]) || Float.isInfinite(high[i]))
            {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean contains(final float[] row, final int offset)
    {
        for (int i = 0; i < low.length; i++)
        {
            final float v = row[offset + i];
            if (!Float.isFinite(v) || v < low[i] || v > high[i])
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Gymnasium's sampling: uniform where both bounds are finite, exponential from a finite bound, normal where
     * neither is.
     */
    @Override
    public void sample(final ResumableRandom random, final float[] row, final int offset)
    {
        for (int i = 0; i < low.length; i++)
        {
            final boolean lo = Float.isFinite(low[i]);
            final boolean hi = Float.isFinite(high[i]);
            final double v;
            if (lo && hi)
            {
                v = low[i] == high[i] ? low[i] : random.nextDouble(low[i], high[i]);
            }
            else if (lo)
            {
                v = low[i] - Math.log(1.0 - random.nextDouble());
            }
            else if (hi)
            {
                v = high[i] + Math.log(1.0 - random.nextDouble());
            }
            else
            {
                v = random.nextGaussian();
            }
            row[offset + i] = (float)v;
        }
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof Box b && Arrays.equals(low, b.low) && Arrays.equals(high, b.high)
            && Arrays.equals(shape, b.shape);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * Arrays.hashCode(low) + Arrays.hashCode(high)) + Arrays.hashCode(shape);
    }

    @Override
    public String toString()
    {
        return "Box(" + Arrays.toString(low) + ", " + Arrays.toString(high) + ", " + Arrays.toString(shape) + ")";
    }
}
