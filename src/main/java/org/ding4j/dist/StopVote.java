package org.ding4j.dist;

/**
 * How the ranks of a distributed learner {@code run()} agree to stop at the same iteration: before each update every
 * rank casts its local wish and all get the strongest one back (one collective per update). With one rank there is
 * no vote and local flags act at once.
 */
@FunctionalInterface
public interface StopVote
{
    /** Go on training. */
    int CONTINUE = 0;
    /** Return normally ({@code stop()}, or the data source ran dry). */
    int END = 1;
    /** Stop as on SIGINT/SIGTERM: rank 0 saves the interrupt checkpoint. */
    int SIGNAL = 2;

    /**
     * @param local this rank's wish: {@link #CONTINUE}, {@link #END} or {@link #SIGNAL}
     * @return the agreed decision: the largest wish over all ranks
     * @throws RuntimeException if the collective fails or times out
     */
    int vote(int local);

    /**
     * Called by the learner's {@code run()} when this rank fails, before its {@code after_run} hooks, so that the
     * peers, which fail at their next collective, can say why. The default does nothing.
     *
     * @param cause what failed here
     */
    default void failed(final Throwable cause)
    {
    }
}
