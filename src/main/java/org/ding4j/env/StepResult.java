package org.ding4j.env;

/**
 * What one {@link Env#step} gave besides the observation: the reward and whether the episode terminated or was
 * truncated. A caller-owned holder, refilled by every step (Gymnasium returns a new tuple; this allocates nothing).
 */
public final class StepResult
{
    private double reward;
    private boolean terminated;
    private boolean truncated;

    /**
     * Sets the outcome (an env's {@code step} calls it).
     *
     * @param reward     the reward of the step
     * @param terminated whether the task ended (nothing to bootstrap after it)
     * @param truncated  whether the episode was cut from outside (a time limit)
     */
    public void set(final double reward, final boolean terminated, final boolean truncated)
    {
        this.reward = reward;
        this.terminated = terminated;
        this.truncated = truncated;
    }

    /** @return the reward of the last step */
    public double reward()
    {
        return reward;
    }

    /** @return whether the last step ended the task */
    public boolean terminated()
    {
        return terminated;
    }

    /** @return whether the last step was cut from outside */
    public boolean truncated()
    {
        return truncated;
    }

    /** @return whether the episode is over either way (the caller resets) */
    public boolean done()
    {
        return terminated || truncated;
    }

    /** Marks the last step truncated (a wrapper's time limit), keeping its reward and termination. */
    public void truncate()
    {
        truncated = true;
    }
}
