package org.ding4j.log;

/** A tick counter: time moves only when {@link #step()} is called (once per {@code log_show} in the learner). */
public final class TickTime implements BaseTime
{
    private long tick;

    /** @return the tick count */
    @Override
    public double time()
    {
        return tick;
    }

    /** @return the tick count as a long */
    public long tick()
    {
        return tick;
    }

    /** Advances one tick. */
    public void step()
    {
        tick++;
    }
}
