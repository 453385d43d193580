package org.ding4j.policy;

/**
 * The learner's allocation-free entry point for an update's log vars: register a key once, write doubles by index.
 * Used on the training thread only.
 */
public interface LogSink
{
    /**
     * @param key a log var name (same routing as map keys is not applied: these go to the {@code scalar} buffer)
     * @return its index, stable for the learner's life
     */
    int register(String key);

    /**
     * @param index from {@link #register}
     * @param value the value for this update
     */
    void put(int index, double value);

    /**
     * Hands over this update's priorities (|TD error| per sample); the array is copied on the next
     * {@code learnInfo()} call, not before, so the policy may reuse it from the update after that.
     *
     * @param priorities one per sample
     * @param count      how many are valid
     */
    void priority(double[] priorities, int count);
}
