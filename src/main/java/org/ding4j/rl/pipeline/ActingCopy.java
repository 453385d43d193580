package org.ding4j.rl.pipeline;

import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.torch.FlatParameters;

/**
 * Parallel mode's copy of the policy's acting net, for the collector thread: the learner's thread {@link #publish}es
 * its net's flat parameters into a buffer, the collector thread {@link #refresh}es its copy from that buffer (the
 * {@link ParallelDriver} holds one lock around both, one memcpy each way) and collects and evaluates with the copy.
 * An algorithm gives the copy's net and says how it collects and evaluates with it.
 */
public abstract class ActingCopy implements AutoCloseable
{
    private final FlatParameters source;
    private final FlatParameters copy;
    private final AutoCloseable net;
    private final Tensor published;

    /**
     * @param source the policy's acting parameters (one CPU group, as the copy's)
     * @param copy   the copy's parameters, of the same layout
     * @param net    the copy's net, closed with this
     */
    protected ActingCopy(final FlatParameters source, final FlatParameters copy, final AutoCloseable net)
    {
        this.source = source;
        this.copy = copy;
        this.net = net;
        this.published = source.group(0).values().clone();
    }

    /** On the learner's thread: copies the policy's acting parameters into the published buffer. */
    public final void publish()
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            published.copy_(source.group(0).values());
        }
    }

    /** On the collector thread: copies the published buffer into this copy's net. */
    public final void refresh()
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            copy.group(0).values().copy_(published);
        }
    }

    /**
     * On the collector thread: collects with the copy into the run's replay.
     *
     * @param transitions at least this many
     */
    public abstract void collect(int transitions);

    /** @return on the collector thread: the copy's evaluation (mean return) */
    public abstract double evaluate();

    /** Frees the buffer, the copy's parameters and its net. */
    @Override
    public final void close()
    {
        published.close();
        copy.close();
        try
        {
            net.close();
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("closing the acting copy's net failed", ex);
        }
    }
}
