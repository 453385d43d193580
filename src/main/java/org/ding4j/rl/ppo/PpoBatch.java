package org.ding4j.rl.ppo;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.NativeOwner;

/**
 * One rollout as PPO's update takes it: every step's observation, action (a {@code Discrete} action's index as a
 * float), log-probability and value at collection, and its GAE advantage and return, in CPU float32 tensors sized once
 * ({@code rows} = {@code n_sample}) that the rollout fills in place. Not thread-safe; the learner's thread.
 */
public final class PpoBatch implements AutoCloseable
{
    private final int rows;
    private final int obsWidth;
    private final int actionWidth;
    private final NativeOwner natives = new NativeOwner("PpoBatch");
    private final Tensor obs;
    private final Tensor actions;
    private final Tensor logProbs;
    private final Tensor values;
    private final Tensor advantages;
    private final Tensor returns;

    /**
     * @param rows        transitions in a rollout
     * @param obsWidth    floats per observation
     * @param actionWidth floats per action (1 for a {@code Discrete} space)
     */
    public PpoBatch(final int rows, final int obsWidth, final int actionWidth)
    {
        this.rows = rows;
        this.obsWidth = obsWidth;
        this.actionWidth = actionWidth;
        obs = natives.own(torch.zeros(rows, obsWidth));
        actions = natives.own(torch.zeros(rows, actionWidth));
        logProbs = natives.own(torch.zeros(rows));
        values = natives.own(torch.zeros(rows));
        advantages = natives.own(torch.zeros(rows));
        returns = natives.own(torch.zeros(rows));
    }

    /**
     * Copies a rollout in (a caller training PPO on rollouts of its own, or a benchmark): each array holds
     * {@link #rows()} rows, row-major.
     *
     * @param obsRows       observations
     * @param actionRows    actions (a {@code Discrete} action's index as a float)
     * @param logProbRows   each action's log-probability at collection
     * @param valueRows     each observation's value at collection
     * @param advantageRows advantages
     * @param returnRows    returns
     */
    public void fill(final float[] obsRows, final float[] actionRows, final float[] logProbRows,
        final float[] valueRows,
        final float[] advantageRows, final float[] returnRows)
    {
        new FloatPointer(obs.data_ptr()).put(obsRows, 0, rows * obsWidth);
        new FloatPointer(actions.data_ptr()).put(actionRows, 0, rows * actionWidth);
        new FloatPointer(logProbs.data_ptr()).put(logProbRows, 0, rows);
        new FloatPointer(values.data_ptr()).put(valueRows, 0, rows);
        new FloatPointer(advantages.data_ptr()).put(advantageRows, 0, rows);
        new FloatPointer(returns.data_ptr()).put(returnRows, 0, rows);
    }

    /** @return transitions in the rollout */
    public int rows()
    {
        return rows;
    }

    Tensor obs()
    {
        return obs;
    }

    Tensor actions()
    {
        return actions;
    }

    Tensor logProbs()
    {
        return logProbs;
    }

    Tensor values()
    {
        return values;
    }

    Tensor advantages()
    {
        return advantages;
    }

    Tensor returns()
    {
        return returns;
    }

    @Override
    public void close()
    {
        natives.close();
    }
}
