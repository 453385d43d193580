package org.ding4j.log;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.agrona.DirectBuffer;

/**
 * TensorFlow's {@code HistogramProto} (min, max, num, sum, sum_squares, bucket_limit, bucket) over TensorFlow's
 * default bucket edges ({@code +-1e-12 * 1.1^k} up to 1e20, then {@code +-DBL_MAX}); only non-empty buckets are
 * written, as PyTorch's {@code SummaryWriter} trims them. Reused by the writer thread; not thread-safe.
 */
final class HistogramProto
{
    private static final double[] LIMITS = limits();

    private final double[] counts = new double[LIMITS.length];
    private final int[] used = new int[LIMITS.length];
    private int usedCount;
    private double min;
    private double max;
    private double num;
    private double sum;
    private double sumSquares;

    private static double[] limits()
    {
        final List<Double> positive = new ArrayList<>();
        for (double v = 1e-12; v < 1e20; v *= 1.1)
        {
            positive.add(v);
        }
        positive.add(Double.MAX_VALUE);
        final int n = positive.size();
        final double[] limits = new double[2 * n];
        for (int i = 0; i < n; i++)
        {
            limits[n - 1 - i] = -positive.get(i);
            limits[n + i] = positive.get(i);
        }
        return limits;
    }

    /** Bins {@code count} doubles read from {@code buffer} at {@code offset}. */
    void prepare(final DirectBuffer buffer, final int offset, final int count)
    {
        Arrays.fill(counts, 0.0);
        min = Double.POSITIVE_INFINITY;
        max = Double.NEGATIVE_INFINITY;
        sum = 0.0;
        sumSquares = 0.0;
        num = count;
        for (int i = 0; i < count; i++)
        {
            final double v = buffer.getDouble(offset + i * Double.BYTES);
            min = Math.min(min, v);
            max = Math.max(max, v);
            sum += v;
            sumSquares += v * v;
            // A bucket holds the values up to and including its limit; NaN lands in the last bucket.
            int at = Arrays.binarySearch(LIMITS, v);
            at = at >= 0 ? at : -at - 1;
            counts[Math.min(at, LIMITS.length - 1)] += 1.0;
        }
        if (0 == count)
        {
            min = 0.0;
            max = 0.0;
        }
        usedCount = 0;
        for (int i = 0; i < counts.length; i++)
        {
            if (counts[i] > 0.0)
            {
                used[usedCount++] = i;
            }
        }
    }

    /** @return the encoded size of the prepared message */
    int size()
    {
        final int packed = usedCount * Double.BYTES;
        final int scalars = 5 * (ProtoBytes.tagSize(1) + Double.BYTES);
        return scalars + 2 * ProtoBytes.lengthDelimitedSize(6, packed);
    }

    /** Writes the prepared message's fields. */
    void write(final ProtoBytes out)
    {
        out.writeDouble(1, min);
        out.writeDouble(2, max);
        out.writeDouble(3, num);
        out.writeDouble(4, sum);
        out.writeDouble(5, sumSquares);
        out.startLengthDelimited(6, usedCount * Double.BYTES);
        for (int i = 0; i < usedCount; i++)
        {
            out.fixed64(Double.doubleToRawLongBits(LIMITS[used[i]]));
        }
        out.startLengthDelimited(7, usedCount * Double.BYTES);
        for (int i = 0; i < usedCount; i++)
        {
            out.fixed64(Double.doubleToRawLongBits(counts[used[i]]));
        }
    }
}
