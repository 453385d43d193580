package org.ding4j.dist;

import java.util.function.IntSupplier;

/**
 * How the ranks of a distributed learner {@code run()} agree to stop at the same iteration: every rank casts its
 * local wish and all get the strongest one back. With one rank there is no vote and local flags act at once.
 * <p>
 * A vote costs a round trip unless it rides on a collective that happens anyway: before an update the learner asks
 * ({@link #carry}) that the update's {@code log_reduce} carry the vote for the update after it, and reads the
 * decision afterwards ({@link #carried}). The wish is taken during that log reduce, so a rank that cannot yet tell
 * whether it will have the next update's data ({@link #UNSURE}) makes every rank vote again, on its own, before it.
 */
public interface StopVote
{
    /** Go on training. */
    int CONTINUE = 0;
    /** Return normally ({@code stop()}, or the data source ran dry). */
    int END = 1;
    /** Stop as on SIGINT/SIGTERM: rank 0 saves the interrupt checkpoint. */
    int SIGNAL = 2;
    /** A carried wish only: this rank cannot tell yet; every rank votes again before the next update. */
    int UNSURE = 3;
    /** What {@link #carried} returns when no decision was carried (none asked, no log reduce ran, or a rank unsure). */
    int NOT_CARRIED = -1;

    /**
     * @param local this rank's wish: {@link #CONTINUE}, {@link #END} or {@link #SIGNAL}
     * @return the agreed decision: the largest wish over all ranks
     * @throws RuntimeException if the collective fails or times out
     */
    int vote(int local);

    /**
     * Asks that the next log reduce of this update carry the vote for the next update; the default carries nothing.
     *
     * @param wish asked during that log reduce: {@link #CONTINUE}, {@link #END}, {@link #SIGNAL} or {@link #UNSURE}
     */
    default void carry(final IntSupplier wish)
    {
    }

    /**
     * Takes the decision carried since {@link #carry} (and forgets the request): {@link #SIGNAL} or {@link #END} if
     * any rank wished it, else {@link #CONTINUE} when every rank was sure, else {@link #NOT_CARRIED}.
     *
     * @return the decision, the same on every rank
     */
    default int carried()
    {
        return NOT_CARRIED;
    }

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
