package org.ding4j.learner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;

/**
 * A real libtorch policy for learner tests: a 4-32-2 MLP regressor with the fused Adam. Each batch is a seed; the
 * update draws its inputs and targets from it, so runs are reproducible without any other RNG state.
 */
public final class RegressionPolicy implements Policy<Long>, AutoCloseable
{
    private final MlpRegressor regressor;
    private int totalLoss;
    private int curLr;

    /** @param initSeed the seed the MLP's initial weights are drawn from */
    public RegressionPolicy(final long initSeed)
    {
        torch.manual_seed(initSeed);
        regressor = new MlpRegressor(Mlp.of(4, 32, 2), AdamConfig.adam(1e-2), 1.0);
    }

    @Override
    public void registerLogVars(final LogSink sink)
    {
        totalLoss = sink.register("total_loss");
        curLr = sink.register("cur_lr");
    }

    @Override
    public void forward(final Long seed, final LogSink sink)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor[] xy = batch(seed);
            sink.put(totalLoss, regressor.step(xy[0], xy[1]));
            sink.put(curLr, regressor.optimizer().lr());
        }
    }

    /** One seed per batch for the data loader of start(). */
    @Override
    public int batchSize()
    {
        return 1;
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr", "total_loss");
    }

    @Override
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("model", regressor.parameters().stateDict());
        state.put("optimizer", regressor.optimizer().stateDict());
        return state;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void loadStateDict(final Map<String, Object> state)
    {
        regressor.parameters().loadStateDict((Map<String, Object>)state.get("model"), true);
        regressor.optimizer().loadStateDict((Map<String, Object>)state.get("optimizer"));
    }

    Tensor values()
    {
        return regressor.parameters().group(0).values();
    }

    /** @return the regressor (its flat parameters and optimizer) */
    public MlpRegressor regressor()
    {
        return regressor;
    }

    /**
     * The batch an update draws from a seed: 16 inputs then 16 targets from libtorch's generator.
     *
     * @param seed the batch
     * @return {inputs [16, 4], targets [16, 2]}, in the caller's pointer scope
     */
    public static Tensor[] batch(final long seed)
    {
        torch.manual_seed(seed);
        return new Tensor[] {torch.randn(16, 4), torch.randn(16, 2)};
    }

    @Override
    public void close()
    {
        regressor.close();
    }
}
