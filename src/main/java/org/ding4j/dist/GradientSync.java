package org.ding4j.dist;

import java.util.ArrayList;
import java.util.List;

import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.Work;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.jfr.AllReduceEvent;
import org.ding4j.jfr.Jfr;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.GradientReducer;
import org.ding4j.torch.NativeOwner;

/**
 * Data-parallel gradient averaging over a {@link DistGroup}: the flat gradient buffers of the policy's
 * {@link FlatParameters} summed over all ranks, then scaled in place by {@code 1/world}, before the fused step.
 * <p>
 * <b>Buckets</b> ({@code bucketBytes > 0}, as PyTorch DDP's {@code bucket_cap_mb}): each buffer is cut, at
 * parameter boundaries and last parameter first, into contiguous slices of at least that many bytes (or what is
 * left at the front). The fused native updates run backward one
 * layer per call and report after each which gradients are final ({@link #gradientsFinal}); every bucket whose
 * gradients are all final is all-reduced at once, asynchronously on Gloo's worker thread, while backward goes on;
 * {@link #reduce} starts what is left and waits for all of them before the step. Buckets start in the same order
 * on every rank (their index order), so the collectives pair up. A bucket is a view of the flat buffer: no packing
 * copy. {@code bucketBytes = 0} is one all-reduce per buffer after backward (the flat path).
 * <p>
 * Every rank ends each update with bit-identical parameters: the all-reduce leaves identical bytes on every rank,
 * the scale and the step are the same deterministic arithmetic on identical inputs, and the parameters start
 * identical ({@link #attach} broadcasts rank 0's). With 2 ranks the buckets give the flat path's bits exactly (each
 * element is one addition); with more, Gloo's ring adds an element's rank contributions in an order that depends on
 * where its chunk falls, so buckets and flat may differ in the last bit (the ranks still agree with each other).
 * No allocation per update but the c10d work handles.
 */
public final class GradientSync implements GradientReducer, AutoCloseable
{
    /**
     * The default bucket size: measured on this machine's 2-rank links (benchmarks/README.md, "Scaling out"), 1 MiB
     * buckets hide most of a ~1M-parameter net's all-reduce behind its backward, where DDP's 25 MiB would make it one
     * bucket that waits for the whole backward.
     */
    public static final double DEFAULT_BUCKET_MB = 1.0;
    private static final String OPERATION = "allreduce gradients";

    private final DistGroup group;
    private final long bucketBytes;
    private final Scalar scale;
    private final NativeOwner natives = new NativeOwner("GradientSync buckets");
    /** The parameters the buckets were cut for (the first that came); another set is refused. */
    private FlatParameters cutFor;
    /** Buckets in start order: group 0's from its end down, then group 1's, ... */
    private Bucket[] buckets;
    /** Buckets started this step. */
    private int started;
    private long reductions;

    /** A contiguous slice of one group's gradient buffer, all-reduced as one message. */
    private static final class Bucket
    {
        final int group;
        /** Its lowest offset in the group's buffer. */
        final long from;
        final long bytes;
        final TensorVector tensors;
        /** Set for a bucket small enough to be summed by direct exchange, else null (Gloo's all-reduce). */
        Exchange exchange;
        Work work;
        AllReduceEvent event;

        Bucket(final int group, final long from, final long bytes, final TensorVector tensors)
        {
            this.group = group;
            this.from = from;
            this.bytes = bytes;
            this.tensors = tensors;
        }
    }

    private GradientSync(final DistGroup group, final long bucketBytes)
    {
        if (bucketBytes < 0)
        {
            throw new IllegalArgumentException("bucketBytes: expected >= 0 (0: one all-reduce per buffer), got "
                + bucketBytes);
        }
        this.group = group;
        this.bucketBytes = bucketBytes;
        this.scale = new Scalar(1.0 / group.info().worldSize());
    }

    /**
     * Broadcasts rank 0's parameters to every rank and makes the optimizer average gradients, in
     * {@link #DEFAULT_BUCKET_MB} buckets, before each step.
     *
     * @param group     the process group
     * @param optimizer the policy's optimizer
     * @return the sync, set as the optimizer's reducer; close it after training
     * @throws DistException if the broadcast fails
     */
    public static GradientSync attach(final DistGroup group, final FusedOptimizer<?> optimizer)
    {
        return attach(group, optimizer, bytesOf(DEFAULT_BUCKET_MB));
    }

    /**
     * As {@link #attach(DistGroup, FusedOptimizer)} with a bucket size.
     *
     * @param group       the process group
     * @param optimizer   the policy's optimizer
     * @param bucketBytes bucket size in bytes; 0 for one all-reduce per buffer after backward
     * @return the sync, set as the optimizer's reducer; close it after training
     * @throws DistException if the broadcast fails
     */
    public static GradientSync attach(final DistGroup group, final FusedOptimizer<?> optimizer,
        final long bucketBytes)
    {
        final GradientSync sync = new GradientSync(group, bucketBytes);
        // Buckets cut at another size on another rank would all-reduce other sizes (Gloo aborts the process).
        broadcastParameters(group, optimizer.parameters(), "bucket bytes " + bucketBytes);
        optimizer.gradientReducer(sync);
        return sync;
    }

    /**
     * A sync not attached to an optimizer, with one all-reduce per buffer: call {@link #reduce} after backward
     * yourself (e.g. with another optimizer).
     *
     * @param group the process group
     * @return the sync; close it after training
     */
    public static GradientSync forGroup(final DistGroup group)
    {
        return new GradientSync(group, 0);
    }

    /**
     * @param megabytes a bucket size in MiB, as {@code dist.bucket_mb}
     * @return it in bytes
     */
    public static long bytesOf(final double megabytes)
    {
        return Math.round(megabytes * 1024 * 1024);
    }

    /**
     * Every rank must share one layout before a collective of its size: DDP checks its parameters' shapes across
     * ranks for the same reason. A rank whose parameters differ in order only would train on with another rank's
     * weights in them, one whose sizes (or buckets) differ would abort the process in Gloo. One all-reduce of a hash
     * per rank (all the same size), so that every rank sees every rank's and fails alike.
     *
     * @param group    the process group
     * @param flat     the parameters: their names, shapes and order
     * @param settings what else the ranks must share (a bucket cap), or empty
     * @throws DistException on every rank, naming this rank's layout, if any rank's differs
     */
    private static void requireSameLayout(final DistGroup group, final FlatParameters flat, final String settings)
    {
        final StringBuilder layout = new StringBuilder(settings);
        for (int i = 0; i < flat.size(); i++)
        {
            layout.append('\n').append(flat.name(i)).append(' ').append(java.util.Arrays.toString(flat.shape(i)));
        }
        final int world = group.info().worldSize();
        final long[] hashes = new long[world];
        // 31 bits: a sum of up to 2^32 ranks' stays within a long.
        final long mine = java.nio.ByteBuffer.wrap(Rendezvous.digest(layout.toString())).getInt() & 0x7fffffffL;
        try (org.bytedeco.javacpp.PointerScope scope = new org.bytedeco.javacpp.PointerScope())
        {
            final Tensor all = torch.empty(new long[] {world}, new org.bytedeco.pytorch.TensorOptions(
                torch.ScalarType.Long), new org.bytedeco.pytorch.MemoryFormatOptional());
            final org.bytedeco.javacpp.LongPointer values = new org.bytedeco.javacpp.LongPointer(all.data_ptr());
            for (int r = 0; r < world; r++)
            {
                values.put(r, r == group.info().rank() ? mine : 0);
            }
            group.allReduceSum(all, "compare the ranks' parameters");
            values.get(hashes);
        }
        for (final long hash : hashes)
        {
            if (hash != mine)
            {
                throw new DistException("compare the ranks' parameters", group.info(), "the ranks' layouts differ "
                    + "(hash per rank " + java.util.Arrays.toString(hashes) + "): every rank needs the same modules "
                    + "with the same parameter names, shapes and order, and the same bucket cap and options; this "
                    + "rank's: " + layout.toString().replace('\n', ';'), null);
            }
        }
    }

    /**
     * Copies rank 0's parameter values into every rank's (one broadcast per flat buffer), once every rank has been
     * seen to hold the same parameters: names, shapes and order (one all-reduce of a hash per rank).
     *
     * @param group  the process group
     * @param params the parameters
     * @throws DistException if a rank's parameters differ (names, shapes, order) or the broadcast fails
     */
    public static void broadcastParameters(final DistGroup group, final FlatParameters params)
    {
        broadcastParameters(group, params, "");
    }

    /**
     * As {@link #broadcastParameters(DistGroup, FlatParameters)}, the ranks sharing {@code settings} too.
     *
     * @param group    the process group
     * @param params   the parameters
     * @param settings what else the ranks must share (a bucket cap), or empty
     * @throws DistException if a rank's parameters or settings differ, or the broadcast fails
     */
    static void broadcastParameters(final DistGroup group, final FlatParameters params, final String settings)
    {
        requireSameLayout(group, params, settings);
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            for (int g = 0; g < params.groupCount(); g++)
            {
                group.broadcast(params.group(g).values(), 0, "broadcast parameters (" + params.group(g).kind() + ")");
            }
        }
    }

    @Override
    public boolean overlapsBackward()
    {
        return bucketBytes > 0;
    }

    @Override
    public void gradientsFinal(final FlatParameters params, final int groupIndex, final long from)
    {
        final Bucket[] all = bucketsOf(params);
        while (started < all.length && all[started].group == groupIndex && all[started].from >= from)
        {
            start(all[started++]);
        }
    }

    @Override
    public void reduce(final FlatParameters params)
    {
        final Bucket[] all = bucketsOf(params);
        while (started < all.length)
        {
            start(all[started++]);
        }
        started = 0;
        for (final Bucket bucket : all)
        {
            if (null != bucket.exchange)
            {
                bucket.exchange.finish(OPERATION);
            }
            else
            {
                final Work work = bucket.work;
                bucket.work = null;
                group.await(work, OPERATION);
            }
            if (null != bucket.event)
            {
                group.commit(bucket.event, OPERATION, bucket.bytes);
                bucket.event = null;
            }
        }
        for (int g = 0, groups = params.groupCount(); g < groups; g++)
        {
            params.group(g).grads().mul_(scale);
        }
        reductions++;
    }

    private void start(final Bucket bucket)
    {
        if (Jfr.allReduces())
        {
            bucket.event = new AllReduceEvent();
            bucket.event.begin();
        }
        if (null != bucket.exchange)
        {
            bucket.exchange.start(OPERATION);
        }
        else
        {
            bucket.work = group.startAllReduceSum(bucket.tensors, OPERATION);
        }
    }

    private Bucket[] bucketsOf(final FlatParameters params)
    {
        if (params == cutFor)
        {
            return buckets;
        }
        if (null != cutFor)
        {
            throw new IllegalStateException("GradientSync: cut for one set of parameters, asked to reduce another");
        }
        final List<Bucket> cut = new ArrayList<>();
        for (int g = 0; g < params.groupCount(); g++)
        {
            final FlatParameters.Group group = params.group(g);
            final Tensor grads = group.grads();
            final long elementBytes = grads.element_size();
            final int[] members = group.members();
            long hi = group.numel();
            for (int k = members.length - 1; k >= 0; k--)
            {
                final long lo = params.offset(members[k]);
                if (0 == k || bucketBytes > 0 && (hi - lo) * elementBytes >= bucketBytes)
                {
                    final Tensor view = natives.own(grads.narrow(0, lo, hi - lo));
                    final Bucket bucket = new Bucket(g, lo, (hi - lo) * elementBytes,
                        natives.own(new TensorVector(view)));
                    if (this.group.exchanges(bucket.bytes) && DistGroup.GLOO.equals(DistGroup.backendFor(view)))
                    {
                        // Small: one round trip by direct exchange instead of the all-reduce's two and a half.
                        bucket.exchange = this.group.exchange(view);
                    }
                    cut.add(bucket);
                    hi = lo;
                }
            }
        }
        cutFor = params;
        buckets = cut.toArray(new Bucket[0]);
        return buckets;
    }

    /** @return the buckets the gradients travel in (0 before the first step) */
    public int bucketCount()
    {
        return null == buckets ? 0 : buckets.length;
    }

    /** @return updates whose gradients were reduced */
    public long reductions()
    {
        return reductions;
    }

    @Override
    public void close()
    {
        if (null != buckets)
        {
            for (final Bucket bucket : buckets)
            {
                if (null != bucket.exchange)
                {
                    bucket.exchange.close();
                }
            }
        }
        natives.close();
        scale.close();
    }
}
