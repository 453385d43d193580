package org.ding4j.env;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** The resumable generator draws exactly what SplittableRandom draws, and continues a stream from a saved state. */
class ResumableRandomTest
{
    private static final int DRAWS = 64;

    @Test
    void shouldDrawWhatSplittableRandomDrawsForTheSameSeed()
    {
        for (final long seed : new long[] {0, 1, 100_001, -1, Long.MIN_VALUE})
        {
            final SplittableRandom expected = new SplittableRandom(seed);
            final ResumableRandom actual = new ResumableRandom(seed);
            for (int i = 0; i < 100_000; i++)
            {
                switch (i % 5)
                {
                    case 0 -> assertEquals(expected.nextDouble(), actual.nextDouble());
                    case 1 -> assertEquals(expected.nextDouble(-0.05, 0.05), actual.nextDouble(-0.05, 0.05));
                    case 2 -> assertEquals(expected.nextInt(2), actual.nextInt(2));
                    case 3 -> assertEquals(expected.nextInt(20_000), actual.nextInt(20_000), "seed " + seed + " draw " + i);
                    default -> assertEquals(expected.nextLong(), actual.nextLong());
                }
            }
        }
    }

    @Test
    void shouldDeriveStreamsThatDrawNothingAnEnvOfANearbySeedDraws()
    {
        // Envs take seed + i: a stream seeded seed + 1 drew env 1's very numbers. A derived stream shares no draw
        // with the envs of nearby seeds, nor with the other streams of its seed.
        for (final long seed : new long[] {0, 1, 7, 100_000, -1, Long.MAX_VALUE})
        {
            final Set<Long> drawn = new HashSet<>();
            for (long i = -8; i < 64; i++)
            {
                draws(new ResumableRandom(seed + i), drawn);
            }
            for (long stream = -3; stream < 8; stream++)
            {
                final int before = drawn.size();
                draws(new ResumableRandom(ResumableRandom.streamSeed(seed, stream)), drawn);
                assertEquals(before + DRAWS, drawn.size(), "seed " + seed + " stream " + stream);
            }
        }
        assertTrue(ResumableRandom.streamSeed(3, 0) != ResumableRandom.streamSeed(4, 0));
    }

    private static void draws(final ResumableRandom random, final Set<Long> into)
    {
        for (int k = 0; k < DRAWS; k++)
        {
            into.add(random.nextLong());
        }
    }

    @Test
    void shouldContinueAStreamFromASavedState()
    {
        final ResumableRandom straight = new ResumableRandom(7);
        final ResumableRandom resumed = new ResumableRandom(12345);
        for (int i = 0; i < 1000; i++)
        {
            straight.nextInt(3);
        }
        resumed.state(straight.state());
        for (int i = 0; i < 1000; i++)
        {
            assertEquals(straight.nextDouble(), resumed.nextDouble());
        }
    }
}
