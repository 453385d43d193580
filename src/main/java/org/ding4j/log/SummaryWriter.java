package org.ding4j.log;

import java.util.Arrays;

/**
 * Where the {@code log_show} hook sends scalars and histograms: TensorBoard's {@code SummaryWriter} role
 * ({@code add_scalar}, {@code add_histogram}). Called from the training thread; an implementation must not block it.
 */
public interface SummaryWriter extends AutoCloseable
{
    /**
     * @param tag   e.g. {@code learner_iter/total_loss_avg}
     * @param value the value
     * @param step  the x coordinate (iteration or env step)
     */
    void addScalar(String tag, double value, long step);

    /**
     * @param tag    e.g. {@code learner/q_value}
     * @param values the sample
     * @param step   the iteration
     */
    void addHistogram(String tag, double[] values, long step);

    /**
     * The histogram of {@code values[0..length)}, for callers that reuse a larger array; this default copies the
     * range, a writer that can read it in place overrides it.
     *
     * @param tag    e.g. {@code learner/q_value}
     * @param values holds the sample in its first {@code length} entries
     * @param length the sample size, 0 to values.length
     * @param step   the iteration
     */
    default void addHistogram(final String tag, final double[] values, final int length, final long step)
    {
        addHistogram(tag, Arrays.copyOf(values, length), step);
    }

    /** Pushes what was accepted towards its destination. */
    void flush();

    /** Flushes and releases the writer; later calls do nothing. */
    @Override
    void close();
}
