package org.ding4j.benchmarks;

/** The two benchmark nets of DESIGN.md: (a) overhead-bound, (b) compute-bound. */
final class Nets
{
    private Nets()
    {
    }

    /**
     * @param name "4-128-128-2" style layer widths
     * @return the widths
     */
    static long[] sizes(final String name)
    {
        final String[] parts = name.split("-");
        final long[] sizes = new long[parts.length];
        for (int i = 0; i < parts.length; i++)
        {
            sizes[i] = Long.parseLong(parts[i]);
        }
        return sizes;
    }
}
