package org.ding4j.dist;

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
 * (keys starting with {@code noreduce_} skipped) packed into one float64 tensor, summed with one all-reduce and
 * divided by the world size in place, as DI-engine's {@code LogReduceHook} averages its values. Keys are packed in
 * name order, not registration order: a policy returning a {@code Map.of} registers its keys in an order that
 * differs from JVM to JVM (3 ranks mixed {@code total_loss} with {@code cur_lr} before this). The first element
 * carries the number of values, so a rank logging a different number of keys fails (Gloo rejects the mismatched
 * sizes, or the summed count differs) instead of mixing values. No allocation per iteration once the buffer and
 * its views exist.
 */
public final class GroupLogReducer implements LogReducer, AutoCloseable
{
    /** The prefix of keys left as they are on each rank (DI-engine's {@code noreduce_}). */
    public static final String NO_REDUCE_PREFIX = "noreduce_";

    private final DistGroup group;
    /** Owns packed and its views (a caller's scope open when they are made must not free them); new per growth. */
    private NativeOwner natives = new NativeOwner("log_reduce buffer");
    private Tensor packed;
    /** views[k] is the first k elements of packed, made once per length. */
    private Tensor[] views = new Tensor[0];
    private DoublePointer data;
    private double[] staging = new double[0];
    private int[] indices = new int[0];
    /** Registered key indices sorted by name, rebuilt when keys are added. */
    private int[] byName = new int[0];

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
        if (indices.length < keys)
        {
            grow(keys);
        }
        if (byName.length != keys)
        {
            byName = java.util.stream.IntStream.range(0, keys).boxed()
                .sorted(java.util.Comparator.comparing(scalar::name)).mapToInt(Integer::intValue).toArray();
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
        // Element 0 carries the count, so that ranks logging different key sets fail loudly instead of mixing.
        staging[0] = n;
        data.put(staging, 0, n + 1);
        if (null == views[n + 1])
        {
            views[n + 1] = natives.own(packed.narrow(0, 0, n + 1));
        }
        group.allReduceSum(views[n + 1], "log_reduce");
        data.get(staging, 0, n + 1);
        final int world = group.info().worldSize();
        if (staging[0] != (double)n * world)
        {
            throw new DistException("log_reduce", group.info(), "ranks logged different key sets (" + n
                + " reduced keys here, " + staging[0] + " summed over " + world + " ranks)", null);
        }
        for (int k = 0; k < n; k++)
        {
            scalar.put(indices[k], staging[k + 1] / world);
        }
    }

    private void grow(final int keys)
    {
        close();
        indices = new int[keys];
        staging = new double[keys + 1];
        views = new Tensor[keys + 2];
        natives = new NativeOwner("log_reduce buffer");
        packed = natives.own(torch.empty(new long[] {keys + 1}, new TensorOptions(torch.ScalarType.Double),
            new org.bytedeco.pytorch.MemoryFormatOptional()));
        data = new DoublePointer(packed.data_ptr());
    }

    @Override
    public void close()
    {
        natives.close();
        packed = null;
    }
}
