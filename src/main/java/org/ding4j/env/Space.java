package org.ding4j.env;

/**
 * The set an observation or action lies in, as Gymnasium's {@code spaces}: what an algorithm may assume about it.
 * Values travel as flat {@code float} rows of {@link #flatSize()} entries (a {@link Discrete} action as one entry
 * holding its index), so that acting and stepping allocate nothing.
 */
public sealed interface Space permits Discrete, Box
{
    /** @return the number of floats one value takes in a flat row */
    int flatSize();

    /**
     * @param row    the flat values
     * @param offset where the value starts
     * @return whether the value lies in this space (finite, within bounds, an index in range)
     */
    boolean contains(float[] row, int offset);

    /**
     * Draws a uniform value (Gymnasium's {@code sample()} for bounded spaces).
     *
     * @param random the stream to draw from
     * @param row    where to write it
     * @param offset where the value starts
     */
    void sample(ResumableRandom random, float[] row, int offset);
}
