package org.ding4j.log;

/**
 * Wall-clock seconds that never go backwards: a clock step back (NTP) repeats the last time instead of
 * travelling back.
 */
public final class NaturalTime implements BaseTime
{
    private double last = Double.NEGATIVE_INFINITY;

    /** @return seconds since the epoch, at least the previous answer */
    @Override
    public double time()
    {
        final double now = System.currentTimeMillis() / 1000.0;
        if (now > last)
        {
            last = now;
        }
        return last;
    }
}
