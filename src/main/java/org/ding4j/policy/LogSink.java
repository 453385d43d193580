package org.ding4j.policy;

/**
 * Where a {@link Policy} writes an update's log vars and priorities: the learner's log buffer, by index. Register a
 * key once, then write doubles by index on every update; nothing here allocates except {@link #value}. Used on the
 * training thread only.
 */
public interface LogSink
{
    /**
     * @return a sink that keeps nothing: for updates whose log vars and priorities nobody reads (a JIT warm-up, a
     *         benchmark)
     */
    static LogSink discard()
    {
        return Discard.INSTANCE;
    }

    /**
     * @param key a log var name; it goes to the {@code scalar} buffer
     * @return its index, stable for the learner's life
     */
    int register(String key);

    /**
     * @param index from {@link #register}
     * @param value the value for this update
     */
    void put(int index, double value);

    /**
     * DI-engine's map-style value, routed by key prefix: {@code [scalars]} to the {@code scalars} buffer,
     * {@code [histogram]} to {@code histogram}, the rest to {@code scalar}. Allocates; {@link MapPolicy} uses
     * it.
     *
     * @param key   the key, with its prefix
     * @param value a number or boolean, a map of numbers ({@code [scalars]}) or numbers ({@code [histogram]})
     * @throws IllegalArgumentException naming the key if the value has no place in the buffers
     */
    void value(String key, Object value);

    /**
     * Reports this update's priorities (|TD error| per sample) with where each sample came from in a replay buffer.
     * The learner copies the first {@code count} entries before this returns, so the policy may reuse its arrays.
     *
     * @param values priority per sample
     * @param slots  each sample's {@code replay_buffer_idx} (-1 if unknown)
     * @param ids    each sample's {@code replay_unique_id} (-1 if unknown)
     * @param count  how many entries are valid
     * @throws IllegalArgumentException if an array is shorter than {@code count}
     */
    default void priority(final double[] values, final int[] slots, final long[] ids, final int count)
    {
        priority(values, count, slots, ids, count);
    }

    /**
     * Reports this update's priorities and, separately, where each item of the batch came from, as DI-engine's
     * {@code priority_info} holds them: one {@code replay_buffer_idx} and {@code replay_unique_id} per data item,
     * whatever number of priority values the policy returned. The learner copies them before this returns.
     *
     * @param values     the priority values
     * @param valueCount how many values are valid
     * @param slots      each data item's {@code replay_buffer_idx} (-1 if unknown)
     * @param ids        each data item's {@code replay_unique_id} (-1 if unknown)
     * @param itemCount  how many data items (slots and ids) are valid
     * @throws IllegalArgumentException if a count is negative or an array shorter than its count
     */
    void priority(double[] values, int valueCount, int[] slots, long[] ids, int itemCount);

    /**
     * Ends the update whose vars were written so far and starts the next, for a policy that runs several updates in
     * one {@code forward} call: the learner counts the update and runs the {@code after_iter} hooks now. The last
     * update of a call ends when {@code forward} returns; a policy that does one update never calls this.
     */
    void nextUpdate();

    /**
     * Says that the time of this call so far went into {@code updates} updates at once (one native call for a whole
     * rollout's minibatches, say), before the first of them is reported: each of them then gets an equal share as its
     * {@code train_time}, not the first all of it and the others the microseconds between their reports. It also
     * says that those updates are made: the hooks of the earlier ones see the last one's weights
     * ({@link org.ding4j.hook.HookContext#updatesAhead()}), and a checkpoint due at one of them is saved at the last
     * one. A policy that makes several updates at once must call it; one that reports each as it makes it need not,
     * and a sink that measures no time ignores it.
     *
     * @param updates how many of this call's updates, the current one first, the time went into (at least 1)
     */
    default void shareTime(final int updates)
    {
    }

    /** The sink of {@link #discard()}. */
    final class Discard implements LogSink
    {
        static final Discard INSTANCE = new Discard();

        private Discard()
        {
        }

        @Override
        public int register(final String key)
        {
            return 0;
        }

        @Override
        public void put(final int index, final double value)
        {
        }

        @Override
        public void value(final String key, final Object value)
        {
        }

        @Override
        public void priority(final double[] values, final int valueCount, final int[] slots, final long[] ids,
            final int itemCount)
        {
        }

        @Override
        public void nextUpdate()
        {
        }
    }
}
