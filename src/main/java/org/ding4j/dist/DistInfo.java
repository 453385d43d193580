package org.ding4j.dist;

import java.util.Map;

/**
 * A process's place in a distributed job: its global rank and the world size (torchrun's {@code RANK} and
 * {@code WORLD_SIZE}).
 *
 * @param rank      0-based global rank, below worldSize
 * @param worldSize number of ranks, >= 1
 */
public record DistInfo(int rank, int worldSize)
{
    /**
     * @throws IllegalArgumentException if worldSize is below 1 or rank is outside [0, worldSize)
     */
    public DistInfo
    {
        if (worldSize < 1)
        {
            throw new IllegalArgumentException("world_size: expected >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("rank: expected 0 <= rank < world_size=" + worldSize + ", got " + rank);
        }
    }

    /** @return rank 0 of 1 */
    public static DistInfo single()
    {
        return new DistInfo(0, 1);
    }

    /**
     * @param environment the process environment ({@code System.getenv()})
     * @return rank and world size from {@code RANK} and {@code WORLD_SIZE}, defaulting to 0 and 1
     * @throws IllegalArgumentException naming the variable if one is not an integer
     */
    public static DistInfo fromEnvironment(final Map<String, String> environment)
    {
        return new DistInfo(integer(environment, "RANK", 0), integer(environment, "WORLD_SIZE", 1));
    }

    private static int integer(final Map<String, String> environment, final String name, final int fallback)
    {
        final String value = environment.get(name);
        if (null == value || value.isBlank())
        {
            return fallback;
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(name + ": expected an integer, got \"" + value + "\"", ex);
        }
    }
}
