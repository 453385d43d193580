package org.ding4j.dist;

import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.GradientReducer;

/**
 * Data-parallel gradient averaging over a {@link DistGroup}: after backward, exactly one all-reduce (sum) per flat
 * gradient buffer of the policy's {@link FlatParameters} (one per dtype/device group, so one for a CPU float32
 * net), then one in-place scale by {@code 1/world}, before the fused step. PyTorch DDP and DI-engine's
 * {@code allreduce} hook issue one collective per parameter tensor instead (DI-engine) or per 25 MB bucket (DDP);
 * the flat buffer makes the whole gradient one contiguous message with no packing copy.
 * <p>
 * Every rank ends each update with bit-identical parameters: the all-reduce leaves identical bytes on every rank,
 * the scale and the step are the same deterministic arithmetic on identical inputs, and the parameters start
 * identical ({@link #attach} broadcasts rank 0's). No allocation per update.
 */
public final class GradientSync implements GradientReducer, AutoCloseable
{
    private final DistGroup group;
    private final Scalar scale;
    private long reductions;

    private GradientSync(final DistGroup group)
    {
        this.group = group;
        this.scale = new Scalar(1.0 / group.info().worldSize());
    }

    /**
     * Broadcasts rank 0's parameters to every rank and makes the optimizer average gradients before each step.
     *
     * @param group     the process group
     * @param optimizer the policy's optimizer
     * @return the sync, set as the optimizer's reducer; close it after training
     * @throws DistException if the broadcast fails
     */
    public static GradientSync attach(final DistGroup group, final FusedOptimizer<?> optimizer)
    {
        final GradientSync sync = forGroup(group);
        broadcastParameters(group, optimizer.parameters());
        optimizer.gradientReducer(sync);
        return sync;
    }

    /**
     * A sync not attached to an optimizer: call {@link #reduce} after backward yourself (e.g. with another optimizer).
     *
     * @param group the process group
     * @return the sync; close it after training
     */
    public static GradientSync forGroup(final DistGroup group)
    {
        return new GradientSync(group);
    }

    /**
     * Copies rank 0's parameter values into every rank's (one broadcast per flat buffer).
     *
     * @param group  the process group
     * @param params the parameters
     * @throws DistException if the broadcast fails
     */
    public static void broadcastParameters(final DistGroup group, final FlatParameters params)
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            for (int g = 0; g < params.groupCount(); g++)
            {
                group.broadcast(params.group(g).values(), 0, "broadcast parameters (" + params.group(g).kind() + ")");
            }
        }
    }

    @Override
    public void reduce(final FlatParameters params)
    {
        for (int g = 0, groups = params.groupCount(); g < groups; g++)
        {
            final org.bytedeco.pytorch.Tensor grads = params.group(g).grads();
            group.allReduceSum(grads, "allreduce gradients");
            grads.mul_(scale);
        }
        reductions++;
    }

    /** @return updates whose gradients were reduced */
    public long reductions()
    {
        return reductions;
    }

    @Override
    public void close()
    {
        scale.close();
    }
}
