package org.ding4j.example.pipeline;

/**
 * Parallel mode's copy of the policy's acting net, for the collector thread: the learner's thread {@link #publish}es
 * its net's parameters into a buffer, the collector thread {@link #refresh}es its copy from that buffer (the
 * {@link ParallelDriver} holds one lock around both, one memcpy each way) and collects and evaluates with the copy.
 */
public interface ActingCopy extends AutoCloseable
{
    /** On the learner's thread: copies the policy's acting parameters into the published buffer. */
    void publish();

    /** On the collector thread: copies the published buffer into this copy's net. */
    void refresh();

    /**
     * On the collector thread: collects with the copy into the run's replay.
     *
     * @param transitions at least this many
     */
    void collect(int transitions);

    /** @return on the collector thread: the copy's evaluation (mean return) */
    double evaluate();

    /** Frees the copy and the buffer. */
    @Override
    void close();
}
