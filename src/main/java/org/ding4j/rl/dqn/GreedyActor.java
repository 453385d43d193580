package org.ding4j.rl.dqn;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedDqnUpdate;
import org.ding4j.torch.NativeOwner;

/**
 * Greedy actions for rows of observations from one batched forward of a Q-network: the observations go into a
 * preallocated input tensor (one bulk copy), the Q-values come back through one bulk copy, and the argmax is taken
 * in Java. Not thread-safe; one per thread. It owns its tensors (a caller's scope does not free them).
 */
final class GreedyActor implements AutoCloseable
{
    private final int rows;
    private final int obsWidth;
    private final int actionCount;
    private final float[] q;
    private final NativeOwner natives = new NativeOwner("GreedyActor");
    private final Tensor input;
    private final FloatPointer inputData;
    private final Tensor output;
    private final FloatPointer outputData;
    /** The net whose Q-values the fused forward computes (with its own scratch memory), or null: libtorch. */
    private QNetwork fusedNet;
    private FusedDqnUpdate fused;
    private FusedDqnUpdate.Forward binding;

    /**
     * @param rows        observations per call (the vector env's size)
     * @param obsWidth    floats per observation
     * @param actionCount the Q-network's outputs
     */
    GreedyActor(final int rows, final int obsWidth, final int actionCount)
    {
        this.rows = rows;
        this.obsWidth = obsWidth;
        this.actionCount = actionCount;
        q = new float[rows * actionCount];
        input = natives.own(torch.zeros(rows, obsWidth));
        inputData = new FloatPointer(input.data_ptr());
        output = natives.own(torch.zeros(rows, actionCount));
        outputData = new FloatPointer(output.data_ptr());
    }

    /**
     * Computes {@code net}'s Q-values in one native call from now on ({@link FusedDqnUpdate}'s forward over its flat
     * parameters) instead of libtorch's modules; another net passed to {@link #act} still goes through libtorch.
     *
     * @param net     the net
     * @param params  its flat parameters
     * @param hidden  its encoder widths
     * @param dueling whether its head is dueling
     */
    void fuse(final QNetwork net, final FlatParameters params, final long[] hidden, final boolean dueling)
    {
        if (null != fused)
        {
            fused.close();
        }
        fused = new FusedDqnUpdate(params, params, hidden, obsWidth, actionCount, dueling, net.activation(), rows,
            DqnPolicy.layerOffsets(params, hidden, dueling));
        binding = fused.bindForward(params, input, output);
        fusedNet = net;
    }

    /**
     * Fills {@code actions} with the greedy action of each observation row (ties to the lowest index).
     *
     * @param net     the Q-network
     * @param obs     {@code [rows, obs]} row-major
     * @param actions one per row
     */
    void act(final QNetwork net, final float[] obs, final int[] actions)
    {
        inputData.put(obs, 0, rows * obsWidth);
        if (net == fusedNet)
        {
            fused.qValues(binding);
        }
        else
        {
            try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
            {
                output.copy_(net.forward(input));
            }
        }
        outputData.get(q);
        for (int i = 0; i < rows; i++)
        {
            int best = 0;
            for (int a = 1; a < actionCount; a++)
            {
                if (q[i * actionCount + a] > q[i * actionCount + best])
                {
                    best = a;
                }
            }
            actions[i] = best;
        }
    }

    @Override
    public void close()
    {
        if (null != fused)
        {
            fused.close();
        }
        natives.close();
    }
}
