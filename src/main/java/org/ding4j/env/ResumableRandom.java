package org.ding4j.env;

/**
 * {@link java.util.SplittableRandom}'s generator (SplitMix64: a 64-bit state advanced by the golden gamma, each
 * output mixed) with the same outputs for the same seed, whose state can be read and set, so a checkpoint can carry
 * the stream and a resumed run continues it instead of replaying the numbers it drew from its seed. Not
 * thread-safe.
 */
public final class ResumableRandom
{
    private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
    /** Any odd constant: it keeps seed 0's streams away from the plain stream of seed 0. */
    private static final long STREAM_KEY = 0x6a09e667f3bcc909L;

    private long state;

    /** @param seed the seed, as {@code new SplittableRandom(seed)} takes it */
    public ResumableRandom(final long seed)
    {
        this.state = seed;
    }

    /**
     * A seed for one of several streams derived from one seed, unrelated to the streams of nearby seeds: envs take
     * {@code seed + i} (Gymnasium's convention), so a second stream seeded {@code seed + 1} would draw exactly env 1's
     * numbers. Two rounds of SplitMix64's mix keep seeds one apart, and streams one apart, far apart.
     *
     * @param seed   the seed the streams share
     * @param stream which stream (any number; distinct numbers give distinct streams)
     * @return the stream's seed
     */
    public static long streamSeed(final long seed, final long stream)
    {
        return mix64(mix64(seed ^ STREAM_KEY) + GOLDEN_GAMMA * (stream + 1));
    }

    /** @return the state to save */
    public long state()
    {
        return state;
    }

    /** @param saved a state from {@link #state()}: the stream continues from where it was saved */
    public void state(final long saved)
    {
        this.state = saved;
    }

    private long nextSeed()
    {
        state += GOLDEN_GAMMA;
        return state;
    }

    private static long mix64(final long seed)
    {
        long z = seed;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private static int mix32(final long seed)
    {
        long z = seed;
        z = (z ^ (z >>> 33)) * 0x62a9d9ed799705f5L;
        return (int)(((z ^ (z >>> 28)) * 0xcb24d0a5c88c35b3L) >>> 32);
    }

    /** @return a uniform long */
    public long nextLong()
    {
        return mix64(nextSeed());
    }

    /** @return a uniform double in [0, 1) */
    public double nextDouble()
    {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    /**
     * A standard normal draw by Box-Muller, two uniforms per draw and no cached spare, so that the whole stream
     * stays in {@link #state()} (a saved state resumes it exactly).
     *
     * @return a draw from N(0, 1)
     */
    public double nextGaussian()
    {
        // 1 - u lies in (0, 1]: the log is finite.
        final double radius = Math.sqrt(-2.0 * Math.log(1.0 - nextDouble()));
        return radius * Math.cos(2.0 * Math.PI * nextDouble());
    }

    /**
     * @param origin smallest value
     * @param bound  bound, above origin
     * @return a uniform double in [origin, bound)
     */
    public double nextDouble(final double origin, final double bound)
    {
        double r = nextDouble();
        r = r * (bound - origin) + origin;
        return r >= bound ? Math.nextDown(bound) : r;
    }

    /**
     * @param bound positive bound
     * @return a uniform int in [0, bound), drawn as {@code SplittableRandom.nextInt(bound)} draws it
     */
    public int nextInt(final int bound)
    {
        if (bound <= 0)
        {
            throw new IllegalArgumentException("bound: expected > 0, got " + bound);
        }
        int r = mix32(nextSeed());
        final int m = bound - 1;
        if (0 == (bound & m))
        {
            return r & m;
        }
        // Rejects the over-represented candidates, as SplittableRandom does.
        for (int u = r >>> 1; u + m - (r = u % bound) < 0; u = mix32(nextSeed()) >>> 1)
        {
            continue;
        }
        return r;
    }
}
