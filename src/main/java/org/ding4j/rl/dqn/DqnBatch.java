package org.ding4j.rl.dqn;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.NativeOwner;

/**
 * One preallocated DQN training batch: Java staging arrays that a replay buffer fills, and libtorch tensors of the
 * same shapes that {@link #upload()} copies them into with one bulk copy each, so a batch costs no tensor
 * allocation. Per sample: observation, action, the n-step discounted return {@code sum_k gamma^k r_k}, the
 * bootstrap factor ({@code gamma^n}, or 0 when the episode ended within the n steps), the next observation, an
 * importance weight, and where it came from in the buffer (slot and unique id).
 * <p>
 * Used by one thread at a time. Its tensors have one owner, the batch: a caller's
 * {@link org.bytedeco.javacpp.PointerScope} open while it is built does not free them; {@link #close()} does.
 */
public final class DqnBatch implements AutoCloseable
{
    /** Observations, row-major [size, obs]. */
    public final float[] obs;
    /** Next observations, row-major [size, obs]. */
    public final float[] nextObs;
    /** Actions taken. */
    public final long[] action;
    /** n-step discounted returns. */
    public final float[] nstepReturn;
    /** gamma^n, or 0 after a terminal step. */
    public final float[] bootstrap;
    /** Importance-sampling weights (1 for uniform sampling). */
    public final float[] weight;
    /** Buffer slots the samples were drawn from. */
    public final int[] bufferIndex;
    /** Unique ids of the samples (the push count when they were stored). */
    public final long[] uniqueId;

    private final int size;
    private final int obsWidth;
    private final NativeOwner natives = new NativeOwner("DqnBatch");
    private final Tensor obsTensor;
    private final Tensor nextObsTensor;
    private final Tensor actionTensor;
    private final Tensor returnTensor;
    private final Tensor bootstrapTensor;
    private final Tensor weightTensor;
    private final FloatPointer obsData;
    private final FloatPointer nextObsData;
    private final LongPointer actionData;
    private final FloatPointer returnData;
    private final FloatPointer bootstrapData;
    private final FloatPointer weightData;

    /**
     * @param size     samples per batch
     * @param obsWidth observation width
     */
    public DqnBatch(final int size, final int obsWidth)
    {
        if (size < 1 || obsWidth < 1)
        {
            throw new IllegalArgumentException("DqnBatch: expected size >= 1 and obsWidth >= 1, got " + size + ", "
                + obsWidth);
        }
        this.size = size;
        this.obsWidth = obsWidth;
        obs = new float[size * obsWidth];
        nextObs = new float[size * obsWidth];
        action = new long[size];
        nstepReturn = new float[size];
        bootstrap = new float[size];
        weight = new float[size];
        bufferIndex = new int[size];
        uniqueId = new long[size];
        java.util.Arrays.fill(weight, 1f);
        obsTensor = natives.own(floats(size, obsWidth));
        nextObsTensor = natives.own(floats(size, obsWidth));
        actionTensor = natives.own(torch.empty(new long[] {size}, new TensorOptions(torch.ScalarType.Long),
            new MemoryFormatOptional()));
        returnTensor = natives.own(floats(size));
        bootstrapTensor = natives.own(floats(size));
        weightTensor = natives.own(floats(size));
        // The data views below have no deallocator of their own: they live as long as the tensors.
        obsData = new FloatPointer(data(obsTensor));
        nextObsData = new FloatPointer(data(nextObsTensor));
        actionData = new LongPointer(data(actionTensor));
        returnData = new FloatPointer(data(returnTensor));
        bootstrapData = new FloatPointer(data(bootstrapTensor));
        weightData = new FloatPointer(data(weightTensor));
    }

    /** Copies the staging arrays into the tensors (one bulk copy per array, no allocation). */
    public void upload()
    {
        obsData.put(obs);
        nextObsData.put(nextObs);
        actionData.put(action);
        returnData.put(nstepReturn);
        bootstrapData.put(bootstrap);
        weightData.put(weight);
    }

    /** @return samples per batch */
    public int size()
    {
        return size;
    }

    /** @return the observation width */
    public int obsWidth()
    {
        return obsWidth;
    }

    /** @return observations [size, obs] */
    public Tensor obsTensor()
    {
        return obsTensor;
    }

    /** @return next observations [size, obs] */
    public Tensor nextObsTensor()
    {
        return nextObsTensor;
    }

    /** @return actions [size], int64 */
    public Tensor actionTensor()
    {
        return actionTensor;
    }

    /** @return n-step returns [size] */
    public Tensor returnTensor()
    {
        return returnTensor;
    }

    /** @return bootstrap factors [size] */
    public Tensor bootstrapTensor()
    {
        return bootstrapTensor;
    }

    /** @return importance weights [size] */
    public Tensor weightTensor()
    {
        return weightTensor;
    }

    /** Frees the tensors. */
    @Override
    public void close()
    {
        natives.close();
    }

    private static Tensor floats(final long... shape)
    {
        return torch.empty(shape, new TensorOptions(torch.ScalarType.Float), new MemoryFormatOptional());
    }

    private static Pointer data(final Tensor t)
    {
        return t.data_ptr();
    }
}
