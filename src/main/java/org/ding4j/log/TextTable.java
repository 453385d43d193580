package org.ding4j.log;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * DI-engine's horizontal variable table ({@code get_tabulate_vars_hor}): rows of at most five columns, a
 * {@code Name} row over a {@code Value} row, values with six decimals.
 * <p>
 * Built for the log reporter's thread, which writes a table per report: {@link #append} writes into the caller's
 * builder and reuses this instance's cell buffers, so a table costs no allocation once they have grown. One instance
 * per thread.
 */
public final class TextTable
{
    /** Columns per row, as DI-engine's. */
    public static final int COLUMNS = 5;
    /** Decimals of every value. */
    public static final int DECIMALS = 6;

    private static final long SCALE = 1_000_000L;
    /** Above this magnitude value x 10^6 no longer fits a long; such values take the BigDecimal path. */
    private static final double LONG_PATH_LIMIT = 9.0e12;

    private final StringBuilder[] cells = new StringBuilder[COLUMNS];
    private final int[] widths = new int[COLUMNS + 1];

    /** Creates a table writer with empty cell buffers. */
    public TextTable()
    {
        for (int i = 0; i < COLUMNS; i++)
        {
            cells[i] = new StringBuilder(24);
        }
    }

    /**
     * Appends the table of {@code names[0..count)} over {@code values[0..count)}, one block of lines per five
     * variables, each line ending in a newline.
     *
     * @param out    where the text goes
     * @param names  the column names, in display order
     * @param values their values
     * @param count  how many columns
     */
    public void append(final StringBuilder out, final CharSequence[] names, final double[] values, final int count)
    {
        for (int from = 0; from < count; from += COLUMNS)
        {
            final int columns = Math.min(COLUMNS, count - from);
            widths[0] = "Value".length();
            for (int i = 0; i < columns; i++)
            {
                final StringBuilder cell = cells[i];
                cell.setLength(0);
                appendFixed(cell, values[from + i]);
                widths[i + 1] = Math.max(names[from + i].length(), cell.length());
            }
            rule(out, columns);
            out.append('|');
            cell(out, "Name", widths[0]);
            for (int i = 0; i < columns; i++)
            {
                cell(out, names[from + i], widths[i + 1]);
            }
            out.append('\n');
            rule(out, columns);
            out.append('|');
            cell(out, "Value", widths[0]);
            for (int i = 0; i < columns; i++)
            {
                cell(out, cells[i], widths[i + 1]);
            }
            out.append('\n');
            rule(out, columns);
        }
    }

    private void rule(final StringBuilder out, final int columns)
    {
        out.append('+');
        for (int i = 0; i <= columns; i++)
        {
            repeat(out, '-', widths[i] + 2);
            out.append('+');
        }
        out.append('\n');
    }

    private static void cell(final StringBuilder out, final CharSequence text, final int width)
    {
        out.append(' ').append(text);
        repeat(out, ' ', width - text.length());
        out.append(" |");
    }

    private static void repeat(final StringBuilder out, final char c, final int times)
    {
        for (int i = 0; i < times; i++)
        {
            out.append(c);
        }
    }

    /**
     * Appends {@code value} with six decimals, rounded half-even from its exact binary value, as Python's
     * {@code format(value, '.6f')} (what DI-engine's table shows) does; Java's {@code %.6f} rounds the shortest
     * decimal form half-up instead, so the two differ at ties such as 0.0078125. NaN and infinities print as Java
     * does ({@code NaN}, {@code Infinity}). Allocation-free for magnitudes below 9e12 (larger ones go through
     * {@link BigDecimal}).
     *
     * @param out   where the digits go
     * @param value the value
     */
    public static void appendFixed(final StringBuilder out, final double value)
    {
        if (Double.isNaN(value) || Double.isInfinite(value))
        {
            out.append(value);
            return;
        }
        if (Math.abs(value) >= LONG_PATH_LIMIT)
        {
            out.append(new BigDecimal(value).setScale(DECIMALS, RoundingMode.HALF_EVEN).toPlainString());
            return;
        }
        final long bits = Double.doubleToRawLongBits(value);
        final int biased = (int)((bits >>> 52) & 0x7ff);
        final long fraction = bits & ((1L << 52) - 1);
        // value = mantissa x 2^exponent exactly.
        final long mantissa = 0 == biased ? fraction : fraction | (1L << 52);
        final int exponent = 0 == biased ? -1074 : biased - 1075;
        final long scaled = scaledHalfEven(mantissa, exponent);
        if (bits < 0)
        {
            out.append('-');
        }
        out.append(scaled / SCALE).append('.');
        final long decimals = scaled % SCALE;
        for (long digit = SCALE / 10; digit > 1 && decimals < digit; digit /= 10)
        {
            out.append('0');
        }
        out.append(decimals);
    }

    /** @return mantissa x 2^exponent x 10^6 rounded half-even, for a product below 2^63 */
    private static long scaledHalfEven(final long mantissa, final int exponent)
    {
        if (exponent >= 0)
        {
            return (mantissa << exponent) * SCALE;
        }
        final int shift = -exponent;
        // The product mantissa x 10^6 < 2^73, as 128 bits (hi, lo); shifting right by shift divides by 2^shift.
        final long hi = Math.multiplyHigh(mantissa, SCALE);
        final long lo = mantissa * SCALE;
        if (shift >= 74)
        {
            return 0; // the product is below 2^73 <= half of 2^shift
        }
        final long quotient;
        final int remainderVsHalf;
        if (shift < 64)
        {
            quotient = (lo >>> shift) | (hi << (64 - shift));
            final long remainder = lo & ((1L << shift) - 1);
            remainderVsHalf = Long.compareUnsigned(remainder, 1L << (shift - 1));
        }
        else if (64 == shift)
        {
            quotient = hi;
            remainderVsHalf = Long.compareUnsigned(lo, 1L << 63);
        }
        else
        {
            final int high = shift - 64;
            quotient = hi >>> high;
            final long remainderHi = hi & ((1L << high) - 1);
            final long halfHi = 1L << (high - 1);
            remainderVsHalf = remainderHi != halfHi ? Long.compare(remainderHi, halfHi) : (0 == lo ? 0 : 1);
        }
        return remainderVsHalf > 0 || (0 == remainderVsHalf && 1 == (quotient & 1)) ? quotient + 1 : quotient;
    }
}
