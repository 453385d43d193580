package org.ding4j.rl.ac;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.NativeOwner;

/**
 * One update's transitions for a continuous-action policy, in preallocated arrays that a sampler fills in place
 * and tensors of the same shapes that {@link #upload()} copies them into: {@code obs [B, obs]}, {@code action
 * [B, act]} (in the policy's [-1, 1] range), {@code reward [B]}, {@code nextObs [B, obs]} and {@code notDone [B]}
 * (0 after a terminal state, 1 otherwise: a time-limit truncation is not terminal). Not thread-safe.
 */
public final class ControlBatch implements AutoCloseable
{
    /** Row-major {@code [size, obsWidth]}. */
    public final float[] obs;
    /** Row-major {@code [size, actionWidth]}. */
    public final float[] action;
    /** One reward per sample. */
    public final float[] reward;
    /** Row-major {@code [size, obsWidth]}. */
    public final float[] nextObs;
    /** 1 where the next state bootstraps, 0 after a terminal state. */
    public final float[] notDone;

    private final int size;
    private final int obsWidth;
    private final int actionWidth;
    private final NativeOwner natives = new NativeOwner("ControlBatch");
    private final Tensor obsTensor;
    private final Tensor actionTensor;
    private final Tensor rewardTensor;
    private final Tensor nextObsTensor;
    private final Tensor notDoneTensor;
    private final FloatPointer[] data;

    /**
     * @param size        samples per batch
     * @param obsWidth    observation width
     * @param actionWidth action width
     */
    public ControlBatch(final int size, final int obsWidth, final int actionWidth)
    {
        if (size < 1 || obsWidth < 1 || actionWidth < 1)
        {
            throw new IllegalArgumentException("ControlBatch: expected size, obsWidth and actionWidth >= 1, got "
                + size + ", " + obsWidth + ", " + actionWidth);
        }
        this.size = size;
        this.obsWidth = obsWidth;
        this.actionWidth = actionWidth;
        obs = new float[size * obsWidth];
        action = new float[size * actionWidth];
        reward = new float[size];
        nextObs = new float[size * obsWidth];
        notDone = new float[size];
        obsTensor = natives.own(floats(size, obsWidth));
        actionTensor = natives.own(floats(size, actionWidth));
        rewardTensor = natives.own(floats(size));
        nextObsTensor = natives.own(floats(size, obsWidth));
        notDoneTensor = natives.own(floats(size));
        // Views without a deallocator of their own: they live as long as the tensors.
        data = new FloatPointer[] {new FloatPointer(obsTensor.data_ptr()), new FloatPointer(actionTensor.data_ptr()),
            new FloatPointer(rewardTensor.data_ptr()), new FloatPointer(nextObsTensor.data_ptr()),
            new FloatPointer(notDoneTensor.data_ptr())};
    }

    /** Copies the arrays into the tensors (no allocation). */
    public void upload()
    {
        data[0].put(obs);
        data[1].put(action);
        data[2].put(reward);
        data[3].put(nextObs);
        data[4].put(notDone);
    }

    /** @return samples per batch */
    public int size()
    {
        return size;
    }

    /** @return observation width */
    public int obsWidth()
    {
        return obsWidth;
    }

    /** @return action width */
    public int actionWidth()
    {
        return actionWidth;
    }

    /** @return {@code [B, obs]} observations */
    public Tensor obsTensor()
    {
        return obsTensor;
    }

    /** @return {@code [B, act]} actions taken */
    public Tensor actionTensor()
    {
        return actionTensor;
    }

    /** @return {@code [B]} rewards */
    public Tensor rewardTensor()
    {
        return rewardTensor;
    }

    /** @return {@code [B, obs]} next observations */
    public Tensor nextObsTensor()
    {
        return nextObsTensor;
    }

    /** @return {@code [B]} bootstrap masks */
    public Tensor notDoneTensor()
    {
        return notDoneTensor;
    }

    /** Frees the tensors. */
    @Override
    public void close()
    {
        natives.close();
    }

    static Tensor floats(final long... shape)
    {
        return torch.empty(shape, new TensorOptions(torch.ScalarType.Float), new MemoryFormatOptional());
    }
}
