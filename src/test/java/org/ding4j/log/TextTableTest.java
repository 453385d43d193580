package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class TextTableTest
{
    @Test
    void shouldLayOutFiveColumnsARowWithNameOverValue()
    {
        final StringBuilder out = new StringBuilder("head\n");
        final String[] names = {"cur_lr_avg", "total_loss_avg", "a", "b", "c", "train_time_p50_ms"};
        final double[] values = {0.1, 0.75, 1e-7, -2.5, Double.NaN, 12345.6789};
        new TextTable().append(out, names, values, 6);
        assertEquals("head\n"
            + "+-------+------------+----------------+----------+-----------+-----+\n"
            + "| Name  | cur_lr_avg | total_loss_avg | a        | b         | c   |\n"
            + "+-------+------------+----------------+----------+-----------+-----+\n"
            + "| Value | 0.100000   | 0.750000       | 0.000000 | -2.500000 | NaN |\n"
            + "+-------+------------+----------------+----------+-----------+-----+\n"
            + "+-------+-------------------+\n"
            + "| Name  | train_time_p50_ms |\n"
            + "+-------+-------------------+\n"
            + "| Value | 12345.678900      |\n"
            + "+-------+-------------------+\n", out.toString());
    }

    @Test
    void shouldRoundTheExactBinaryValueHalfEvenAsPythonDoes()
    {
        // 2^-7 x 10^6 = 7812.5 exactly: Python's '%.6f' gives 0.007812; Java's String.format gives 0.007813.
        assertFixed("0.007812", 0.0078125);
        assertFixed("0.007813", Math.nextUp(0.0078125));
        assertFixed("-0.000000", -0.0);
        assertFixed("-0.000000", -4e-7);
        assertFixed("0.000001", 5.000000000000001e-7);
        assertFixed("Infinity", Double.POSITIVE_INFINITY);
        assertFixed("-Infinity", Double.NEGATIVE_INFINITY);
        assertFixed("0.000000", Double.MIN_VALUE);
        assertFixed(python(Double.MAX_VALUE),
            Double.MAX_VALUE);
        final SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 300_000; i++)
        {
            // Any bit pattern; magnitudes 1e-8 to 1e13 (across the long path's limit); values at or near a tie.
            final double value = switch (i % 3)
            {
                case 0 -> Double.longBitsToDouble(random.nextLong());
                case 1 -> Math.pow(10, random.nextDouble(-8, 13)) * (random.nextBoolean() ? 1 : -1);
                default -> (random.nextLong(-20_000_000_000L, 20_000_000_000L) + 0.5) / 1e6
                    / (1L << random.nextInt(0, 12));
            };
            if (Double.isFinite(value))
            {
                assertFixed(python(value), value);
            }
        }
        for (int e = -30; e <= 13; e++)
        {
            final double value = Math.pow(10, e) * 1.2345678;
            assertFixed(python(value), value);
        }
    }

    /** Python's '%.6f': the exact value rounded half-even, keeping the sign of a negative that rounds to zero. */
    private static String python(final double value)
    {
        final String digits = new BigDecimal(value).setScale(6, RoundingMode.HALF_EVEN).toPlainString();
        return value < 0 && !digits.startsWith("-") ? "-" + digits : digits;
    }

    private static void assertFixed(final String expected, final double value)
    {
        final StringBuilder out = new StringBuilder();
        TextTable.appendFixed(out, value);
        assertEquals(expected, out.toString(), () -> "value " + value);
    }
}
