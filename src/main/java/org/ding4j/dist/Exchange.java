package org.ding4j.dist;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.Work;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.jfr.AllReduceEvent;
import org.ding4j.jfr.Jfr;
import org.ding4j.torch.NativeOwner;

/**
 * One tensor's sum by direct exchange within a {@link DistGroup} ({@link DistGroup#exchange}): post with
 * {@link #start}, then {@link #finish}. Training thread only. It keeps the receives of the next two sums posted (two
 * buffers per peer, used in turn), so that each peer knows where the next message goes before it is sent.
 */
final class Exchange implements AutoCloseable
{
    private final DistGroup group;
    private final DistInfo info;
    private final Tensor tensor;
    private final TensorVector own;
    /** The peers' values, by buffer and rank (this rank's slot empty): one buffer, or two in turn when ahead. */
    private final Tensor[][] received;
    private final TensorVector[][] receiving;
    private final Work[][] receives;
    private final Work[] sends;
    /** Whether buffer b's receives are posted. */
    private final boolean[] posted;
    /** The ordered sum for more than two ranks; null for one or two (a + b is b + a). */
    private final Tensor ordered;
    private final int tag;
    /** The sums done; sum k uses buffer k % buffers. */
    private long round;
    /** Set by a failure: the messages of this tag may be out of step, so no further sum is made with it. */
    private boolean broken;
    /** Between a start and its finish. */
    private boolean inFlight;
    /** Owns the buffers: a caller's scope open while they are made (the first update's) must not free them. */
    private final NativeOwner natives = new NativeOwner("exchange");

    Exchange(final DistGroup group, final Tensor tensor, final int tag, final boolean ahead)
    {
        this.group = group;
        this.info = group.info();
        if (!tensor.is_contiguous() || !DistGroup.GLOO.equals(DistGroup.backendFor(tensor)))
        {
            throw new IllegalArgumentException("exchange: expected a contiguous CPU tensor");
        }
        this.tensor = tensor;
        this.tag = tag;
        final int world = info.worldSize();
        final int buffers = ahead ? 2 : 1;
        own = natives.own(new TensorVector(tensor));
        received = new Tensor[buffers][world];
        receiving = new TensorVector[buffers][world];
        receives = new Work[buffers][world];
        posted = new boolean[buffers];
        for (int b = 0; b < buffers; b++)
        {
            for (int r = 0; r < world; r++)
            {
                if (r != info.rank())
                {
                    received[b][r] = natives.own(torch.empty_like(tensor));
                    receiving[b][r] = natives.own(new TensorVector(received[b][r]));
                }
            }
        }
        sends = new Work[world];
        ordered = world > 2 ? natives.own(torch.empty_like(tensor)) : null;
    }

    private void post(final int buffer, final String operation)
    {
        if (posted[buffer])
        {
            return;
        }
        try
        {
            for (int r = 0; r < info.worldSize(); r++)
            {
                if (r != info.rank())
                {
                    // Held past the caller's pointer scope (an ahead receive is posted in one update and waited
                    // for in the next): released once waited for.
                    receives[buffer][r] = group.gloo().recv(receiving[buffer][r], r, tag).retainReference();
                }
            }
        }
        catch (final RuntimeException ex)
        {
            // What was posted before the failure is not counted in posted[]: broken keeps it outstanding.
            broken = true;
            throw group.failure(operation, DistGroup.reason(ex), ex);
        }
        posted[buffer] = true;
    }

    /**
     * @return whether Gloo may still write into a receive buffer: receives are posted, or a failure left some in
     *         an unknown state
     */
    private boolean outstanding()
    {
        return broken || posted[0] || posted[posted.length - 1];
    }

    /** Refuses a sum on an exchange a failure left out of step, and a start or finish out of turn. */
    private void checkTurn(final String operation, final boolean starting)
    {
        group.checkOpen(operation);
        if (broken)
        {
            throw new DistException(operation, info, "an earlier sum on this exchange failed, so its messages may "
                + "be out of step; the group must be joined again", null);
        }
        if (starting == inFlight)
        {
            throw new IllegalStateException(operation + ": " + (starting ? "start" : "finish") + " called twice "
                + "without " + (starting ? "finish" : "start") + " (the peers would pair other sums' messages)");
        }
    }

    /**
     * Posts this sum's receives (and, ahead, the next sum's) unless posted already, then the sends (asynchronous:
     * the caller goes on). Messages of one tag and peer meet the receives in the order they were posted.
     *
     * @param operation what it is for, named in errors
     */
    void start(final String operation)
    {
        checkTurn(operation, true);
        inFlight = true;
        final int buffers = posted.length;
        post((int)(round % buffers), operation);
        post((int)((round + 1) % buffers), operation);
        try
        {
            for (int r = 0; r < info.worldSize(); r++)
            {
                if (r != info.rank())
                {
                    sends[r] = group.gloo().send(own, r, tag);
                }
            }
        }
        catch (final RuntimeException ex)
        {
            broken = true;
            throw group.failure(operation, DistGroup.reason(ex), ex);
        }
    }

    /**
     * Sums now: {@link #start} and {@link #finish}, one JFR {@link AllReduceEvent} when recorded.
     *
     * @param operation what it is for, named in errors
     */
    void sum(final String operation)
    {
        final AllReduceEvent event = Jfr.allReduces() ? new AllReduceEvent() : null;
        if (null != event)
        {
            event.begin();
        }
        start(operation);
        finish(operation);
        if (null != event)
        {
            group.commit(event, operation, tensor.nbytes());
        }
    }

    /**
     * Waits for every message (within the group's timeout) and leaves the sum in the tensor.
     *
     * @param operation what it is for, named in errors
     */
    void finish(final String operation)
    {
        checkTurn(operation, false);
        final int buffer = (int)(round % posted.length);
        final Tensor[] values = received[buffer];
        // Marked broken until every message is in: a failure below leaves the tag out of step.
        broken = true;
        for (int r = 0; r < values.length; r++)
        {
            if (r != info.rank())
            {
                final Work receive = receives[buffer][r];
                final Work send = sends[r];
                receives[buffer][r] = null;
                sends[r] = null;
                group.await(receive, operation);
                receive.releaseReference();
                group.await(send, operation);
            }
        }
        broken = false;
        inFlight = false;
        posted[buffer] = false;
        round++;
        if (null == ordered)
        {
            // One rank's sum is its own value (torchrun --nproc-per-node 1 is a world); two ranks' is a + b = b + a.
            if (2 == values.length)
            {
                tensor.add_(values[1 - info.rank()]);
            }
            return;
        }
        ordered.copy_(0 == info.rank() ? tensor : values[0]);
        for (int r = 1; r < values.length; r++)
        {
            ordered.add_(r == info.rank() ? tensor : values[r]);
        }
        tensor.copy_(ordered);
    }

    /** Aborts and lets go of the receives still posted (their Works hold Gloo's connections open). */
    void dropReceives()
    {
        for (final Work[] buffer : receives)
        {
            for (int r = 0; r < buffer.length; r++)
            {
                final Work receive = buffer[r];
                buffer[r] = null;
                if (null != receive && !receive.isNull())
                {
                    try
                    {
                        receive.abort();
                    }
                    catch (final RuntimeException alreadyOver)
                    {
                        // Completed or failed meanwhile: nothing to abort.
                    }
                    receive.releaseReference();
                }
            }
        }
    }

    @Override
    public void close()
    {
        if (outstanding() && !group.isClosed())
        {
            // Gloo may still write into the buffers: they go with the group, after Gloo is shut down.
            group.park(this);
            return;
        }
        dropReceives();
        natives.close();
    }

    /** Frees the buffers (the group's close, after Gloo shut down, for a parked exchange). */
    void freeBuffers()
    {
        natives.close();
    }
}
