package org.ding4j.example.cartpole;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.example.dqn.DqnPolicy;
import org.ding4j.example.dqn.QNetwork;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedDqnUpdate;
import org.ding4j.torch.NativeOwner;

/**
 * Greedy actions for a vector of environments from one batched forward of a Q-network: the observations go into a
 * preallocated input tensor (one bulk copy), the Q-values come back through one bulk copy, and the argmax is taken
 * in Java. Not thread-safe; one per thread. It owns its tensors (a caller's scope does not free them).
 */
final class GreedyActor implements AutoCloseable
{
    private final CartPole envs;
    private final float[] obs;
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

    GreedyActor(final CartPole envs)
    {
        this.envs = envs;
        obs = new float[envs.size() * CartPole.OBS];
        q = new float[envs.size() * CartPole.ACTIONS];
        input = natives.own(torch.zeros(envs.size(), CartPole.OBS));
        inputData = new FloatPointer(input.data_ptr());
        output = natives.own(torch.zeros(envs.size(), CartPole.ACTIONS));
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
        fused = new FusedDqnUpdate(params, params, hidden, CartPole.OBS, CartPole.ACTIONS, dueling, net.activation(),
            envs.size(), DqnPolicy.layerOffsets(params, hidden, dueling));
        binding = fused.bindForward(params, input, output);
        fusedNet = net;
    }

    /** @return the environments it observes */
    CartPole envs()
    {
        return envs;
    }

    /** @return the observations of the last {@link #act} call, row-major [envs, obs] */
    float[] observations()
    {
        return obs;
    }

    /**
     * Observes every environment and fills {@code actions} with the greedy action of each.
     *
     * @param net     the Q-network
     * @param actions one per environment
     */
    void act(final QNetwork net, final int[] actions)
    {
        for (int i = 0; i < envs.size(); i++)
        {
            envs.observe(i, obs, i * CartPole.OBS);
        }
        inputData.put(obs);
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
        for (int i = 0; i < actions.length; i++)
        {
            int best = 0;
            for (int a = 1; a < CartPole.ACTIONS; a++)
            {
                if (q[i * CartPole.ACTIONS + a] > q[i * CartPole.ACTIONS + best])
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
