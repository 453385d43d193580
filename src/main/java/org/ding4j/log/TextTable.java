package org.ding4j.log;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * DI-engine's horizontal variable table ({@code get_tabulate_vars_hor}): rows of at most five columns, a
 * {@code Name} row over a {@code Value} row, values with six decimals.
 */
public final class TextTable
{
    /** Columns per row, as DI-engine's. */
    public static final int COLUMNS = 5;

    private TextTable()
    {
    }

    /**
     * @param vars names and values, in display order
     * @return the table text, one block of lines per five variables
     */
    public static String horizontal(final Map<String, Double> vars)
    {
        final List<String> names = new ArrayList<>(vars.keySet());
        final StringBuilder out = new StringBuilder();
        for (int from = 0; from < names.size(); from += COLUMNS)
        {
            final List<String> row = names.subList(from, Math.min(names.size(), from + COLUMNS));
            final String[] header = new String[row.size() + 1];
            final String[] value = new String[row.size() + 1];
            header[0] = "Name";
            value[0] = "Value";
            for (int i = 0; i < row.size(); i++)
            {
                header[i + 1] = row.get(i);
                value[i + 1] = String.format(Locale.ROOT, "%.6f", vars.get(row.get(i)));
            }
            final int[] widths = new int[header.length];
            for (int i = 0; i < header.length; i++)
            {
                widths[i] = Math.max(header[i].length(), value[i].length());
            }
            final String rule = rule(widths);
            out.append(rule).append(line(header, widths)).append(rule).append(line(value, widths)).append(rule);
        }
        return out.toString();
    }

    private static String rule(final int[] widths)
    {
        final StringBuilder line = new StringBuilder("+");
        for (final int width : widths)
        {
            line.append("-".repeat(width + 2)).append('+');
        }
        return line.append('\n').toString();
    }

    private static String line(final String[] cells, final int[] widths)
    {
        final StringBuilder line = new StringBuilder("|");
        for (int i = 0; i < cells.length; i++)
        {
            line.append(' ').append(cells[i]).append(" ".repeat(widths[i] - cells[i].length())).append(" |");
        }
        return line.append('\n').toString();
    }
}
