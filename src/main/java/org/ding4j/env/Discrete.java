package org.ding4j.env;

/**
 * Gymnasium's {@code Discrete(n)}: the actions {@code 0 .. n-1}. A value is one float holding the index.
 *
 * @param n the number of actions, >= 1
 */
public record Discrete(int n) implements Space
{
    /**
     * Checks the count.
     *
     * @throws IllegalArgumentException if {@code n < 1}
     */
    public Discrete
    {
        if (n < 1)
        {
            throw new IllegalArgumentException("Discrete: expected n >= 1, got " + n);
        }
    }

    @Override
    public int flatSize()
    {
        return 1;
    }

    @Override
    public boolean contains(final float[] row, final int offset)
    {
        final float v = row[offset];
        return v >= 0 && v < n && v == (int)v;
    }

    @Override
    public void sample(final ResumableRandom random, final float[] row, final int offset)
    {
        row[offset] = random.nextInt(n);
    }

    /**
     * @param row    the flat values
     * @param offset where the action is
     * @return the action's index
     * @throws IllegalArgumentException naming the value if it is not an index of this space
     */
    public int index(final float[] row, final int offset)
    {
        if (!contains(row, offset))
        {
            throw new IllegalArgumentException("action: expected an integer in [0, " + n + "), got " + row[offset]);
        }
        return (int)row[offset];
    }

    @Override
    public String toString()
    {
        return "Discrete(" + n + ")";
    }
}
