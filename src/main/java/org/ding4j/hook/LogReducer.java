package org.ding4j.hook;

import org.ding4j.log.LogBuffer;

/**
 * Averages an iteration's numeric log values across ranks in place (keys starting with {@code noreduce_} stay as
 * they are). Every rank calls it at the same iteration with the same keys.
 */
@FunctionalInterface
public interface LogReducer
{
    /** The single-process reducer: nothing to average. */
    LogReducer IDENTITY = buffer -> { };

    /**
     * @param buffer this rank's buffer, replaced by the mean over ranks
     * @throws Exception if the collective fails or times out
     */
    void allReduce(LogBuffer buffer) throws Exception;
}
