package org.ding4j.learner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;
import org.ding4j.policy.Policy;

/**
 * A real libtorch policy for learner tests: a 4-32-2 MLP regressor with the fused Adam. Each batch is a seed; the
 * update draws its inputs and targets from it, so runs are reproducible without any other RNG state.
 */
final class RegressionPolicy implements Policy, AutoCloseable
{
    private final MlpRegressor regressor;

    RegressionPolicy(final long initSeed)
    {
        torch.manual_seed(initSeed);
        regressor = new MlpRegressor(Mlp.of(4, 32, 2), AdamConfig.adam(1e-2), 1.0);
    }

    @Override
    public Object forward(final Object data, final Map<String, Object> kwargs)
    {
        try (PointerScope scope = new PointerScope())
        {
            torch.manual_seed((Long)data);
            final Tensor x = torch.randn(16, 4);
            final Tensor y = torch.randn(16, 2);
            final double loss = regressor.step(x, y);
            return new LinkedHashMap<>(Map.of("total_loss", loss, "cur_lr", regressor.optimizer().lr()));
        }
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

    @Override
    public void close()
    {
        regressor.close();
    }
}
