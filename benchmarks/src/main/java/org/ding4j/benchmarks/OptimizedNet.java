package org.ding4j.benchmarks;

import org.bytedeco.pytorch.Optimizer;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.Mlp;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Benchmark state shared by the optimizer comparisons: a net with either ding4j's fused optimizer (over flat
 * parameters) or one of libtorch's, and the tear-down that frees them.
 */
public abstract class OptimizedNet
{
    Mlp mlp;
    FlatParameters flat;
    FusedOptimizer<?> fused;
    Optimizer reference;

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != fused)
        {
            fused.close();
            flat.close();
        }
        mlp.close();
    }
}
