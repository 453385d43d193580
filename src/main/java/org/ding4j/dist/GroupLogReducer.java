package org.ding4j.dist;

import java.util.function.IntSupplier;

import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.hook.LogReducer;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.ScalarDict;
import org.ding4j.torch.NativeOwner;

/**
 * The learner's {@code log_reduce} over a {@link DistGroup}: every numeric value of the iteration's log buffer
 * (keys starting with {@code noreduce_} skipped) packed into one float64 tensor, summed with one all-reduce (or, with
 * 2 ranks, one direct exchange that posts its receives ahead: {@link DistGroup#exchange}) and divided by the world
 * size in place, as DI-engine's {@code LogReduceHook} averages its values. Keys are packed in name order, not
 * registration order: a policy returning a {@code Map.of} registers its keys in an order that differs from JVM to JVM
 * (3 ranks mixed {@code total_loss} with {@code cur_lr} before this). The message has one length per number of
 * registered reduced keys (the values present this iteration, the vote's slots, zeros after them; {@code noreduce_}
 * keys, which may differ from rank to rank, do not count), so its receives can be posted a sum ahead. The first
 * element carries the number of values and whether a vote rides along, so a rank logging other keys this iteration
 * fails on the summed count instead of mixing values (one that registered a different number of reduced keys waits
 * on another message and fails at the group's timeout). No allocation per iteration once the buffer exists.
 * <p>
 * Asked to ({@link #carryVote}), it carries the learner's stop vote for the next update in three more elements
 * (end, signal, unsure: counts summed exactly in float64), so the vote costs no round trip of its own.
 */
public final class GroupLogReducer implements LogReducer, AutoCloseable
{
    /** The prefix of keys left as they are on each rank (DI-engine's {@code noreduce_}). */
    public static final String NO_REDUCE_PREFIX = "noreduce_";
    /** End, signal and unsure counts after the values when a vote rides along. */
    private static final int VOTE_SLOTS = 3;

    private final DistGroup group;
    /** Owns packed (a caller's scope open when it is made must not free it); new per growth. */
    private NativeOwner natives = new NativeOwner("log_reduce buffer");
    /** The message: the count, the values, the vote's slots; as long as the registered keys allow. */
    private Tensor packed;
    /** Sums packed by direct exchange (2 ranks, or few and small), made with it; null: the all-reduce. */
    private Exchange exchange;
    private DoublePointer data;
    private double[] staging = new double[0];
    private int[] indices = new int[0];
    /** Registered key indices sorted by name, rebuilt when keys are added. */
    private int[] byName = new int[0];
    /** How many registered keys are reduced (not {@code noreduce_}): the message's length follows it. */
    private int reducible;
    /** The wish to carry on the next reduce, or null. */
    private IntSupplier wish;
    private int carried = StopVote.NOT_CARRIED;

    /**
     * @param group the process group
     */
    public GroupLogReducer(final DistGroup group)
    {
        this.group = group;
    }

    @Override
    public void allReduce(final LogBuffer buffer)
    {
        final ScalarDict scalar = buffer.scalar();
        final int keys = scalar.keyCount();
        if (byName.length != keys)
        {
            byName = java.util.stream.IntStream.range(0, keys).boxed()
                .sorted(java.util.Comparator.comparing(scalar::name)).mapToInt(Integer::intValue).toArray();
            reducible = (int)java.util.stream.IntStream.of(byName)
                .filter(i -> !scalar.name(i).startsWith(NO_REDUCE_PREFIX)).count();
        }
        if (null == packed || indices.length < reducible)
        {
            grow(reducible);
        }
        int n = 0;
        for (final int i : byName)
        {
            if (scalar.isPresent(i) && !scalar.name(i).startsWith(NO_REDUCE_PREFIX))
            {
                indices[n] = i;
                staging[n + 1] = scalar.value(i);
                n++;
            }
        }
        final IntSupplier carry = wish;
        wish = null;
        // Without a vote riding along the slots are zeros: CONTINUE sets none of them.
        final int local = null == carry ? StopVote.CONTINUE : carry.getAsInt();
        staging[n + 1] = StopVote.END == local ? 1 : 0;
        staging[n + 2] = StopVote.SIGNAL == local ? 1 : 0;
        staging[n + 3] = StopVote.UNSURE == local ? 1 : 0;
        // A fixed length: what an earlier iteration left beyond this one's values is cleared.
        java.util.Arrays.fill(staging, n + 1 + VOTE_SLOTS, staging.length, 0.0);
        // Element 0 carries the count and whether a vote rides along, so that ranks logging different key sets (or
        // one carrying a vote and another not) fail loudly instead of mixing.
        final double shape = 2.0 * n + (null == carry ? 0 : 1);
        staging[0] = shape;
        data.put(staging, 0, staging.length);
        if (null != exchange)
        {
            exchange.sum("log_reduce");
        }
        else
        {
            group.allReduceSum(packed, "log_reduce");
        }
        data.get(staging, 0, staging.length);
        final int world = group.info().worldSize();
        if (staging[0] != shape * world)
        {
            throw new DistException("log_reduce", group.info(), "ranks logged different key sets (" + n
                + " reduced keys here" + (null == carry ? "" : " and the stop vote") + ", shape " + shape + " x "
                + world + " ranks expected, " + staging[0] + " summed)", null);
        }
        if (null != carry)
        {
            carried = staging[n + 2] > 0 ? StopVote.SIGNAL : staging[n + 1] > 0 ? StopVote.END
                : staging[n + 3] > 0 ? StopVote.NOT_CARRIED : StopVote.CONTINUE;
        }
        for (int k = 0; k < n; k++)
        {
            scalar.put(indices[k], staging[k + 1] / world);
        }
    }

    /**
     * Makes the next {@link #allReduce} carry a stop vote (see {@link StopVote#carry}).
     *
     * @param local asked for this rank's wish during that reduce
     */
    void carryVote(final IntSupplier local)
    {
        wish = local;
        carried = StopVote.NOT_CARRIED;
    }

    /** @return the decision the last reduce carried since {@link #carryVote}, forgetting it and the request */
    int takeVote()
    {
        final int decision = carried;
        carried = StopVote.NOT_CARRIED;
        wish = null;
        return decision;
    }

    private void grow(final int keys)
    {
        close();
        indices = new int[keys];
        staging = new double[keys + 1 + VOTE_SLOTS];
        natives = new NativeOwner("log_reduce buffer");
        packed = natives.own(torch.empty(new long[] {staging.length}, new TensorOptions(torch.ScalarType.Double),
            new org.bytedeco.pytorch.MemoryFormatOptional()));
        data = new DoublePointer(packed.data_ptr());
        exchange = group.exchanges(packed.nbytes()) ? group.exchange(packed) : null;
    }

    @Override
    public void close()
    {
        if (null != exchange)
        {
            exchange.close();
            exchange = null;
        }
        natives.close();
        packed = null;
    }
}
