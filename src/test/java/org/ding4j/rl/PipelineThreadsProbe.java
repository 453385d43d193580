package org.ding4j.rl;

import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.torch.Threads;

/**
 * A child JVM of {@link PipelineThreadsTest}: an application that runs a short DQN pipeline, having set ding4j's
 * thread counts itself first (argument {@code own}) or not, then prints the counts libtorch and OpenBLAS use.
 */
public final class PipelineThreadsProbe
{
    private PipelineThreadsProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length > 1 && "own".equals(args[1]))
        {
            Threads.configure(1, 1, 2);
        }
        new OffPolicyPipeline(Config.empty().with("exp_name", args[0]).with("env.stop_value", 1000.0)
            .with("pipeline.max_train_iter", 20L)).run(p -> { });
        System.out.println("threads intra-op " + torch.get_num_threads() + " blas "
            + openblas_nolapack.blas_get_num_threads());
    }
}
