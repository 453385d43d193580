package org.ding4j.policy;

import java.util.List;
import java.util.Map;

/**
 * DI-engine's way of writing a policy: {@link #learn} returns an update's log vars as a map and the learner routes
 * them. This base class adapts those maps onto the {@link LogSink}, so the learner has one train path for both
 * styles; it allocates what the maps allocate. A {@code priority} entry is taken out (the policy's map is not
 * changed) and reported with the ids that each item of a batch of maps carries under {@code replay_buffer_idx} and
 * {@code replay_unique_id} (-1 where absent): one pair per data item, however many priority values there are, as
 * DI-engine's {@code priority_info}.
 * <p>
 * Several updates per training call: DI-engine's {@code _forward_learn} may run K updates and return a list of K
 * maps, after which its learner replays {@code after_iter} K times over a policy that has already finished all K.
 * Here {@link #learn} runs one update and {@link #updatesPerCall} says how many a call makes: the learner calls
 * {@code learn} that many times on the batch, and each update gets its own {@code before_iter} and
 * {@code after_iter} hooks and its own {@code train_time}, so a checkpoint hook saves the policy between updates,
 * as the counter says. A returned list is refused with a message saying so.
 *
 * @param <B> the batch type (DI-engine: a list of transition maps)
 */
public abstract class MapPolicy<B> implements Policy<B>
{
    /** The key of the per-sample priorities in a log-var map. */
    public static final String PRIORITY = "priority";

    private double[] priorities = new double[0];
    private int[] slots = new int[0];
    private long[] ids = new long[0];

    /**
     * One update.
     *
     * @param batch the batch
     * @return its log vars
     */
    protected abstract Map<?, ?> learn(B batch);

    /**
     * @param batch the batch of this training call
     * @return how many updates ({@link #learn} calls) it makes, at least 1; 1 unless overridden
     */
    protected int updatesPerCall(final B batch)
    {
        return 1;
    }

    /** Map keys need no registration. */
    @Override
    public void registerLogVars(final LogSink sink)
    {
    }

    @Override
    public final void forward(final B batch, final LogSink sink)
    {
        final int updates = updatesPerCall(batch);
        if (updates < 1)
        {
            throw new IllegalArgumentException("updatesPerCall: expected at least 1, got " + updates);
        }
        for (int u = 0; u < updates; u++)
        {
            if (u > 0)
            {
                sink.nextUpdate();
            }
            route(learn(batch), batch, sink);
        }
    }

    private void route(final Object vars, final B batch, final LogSink sink)
    {
        if (!(vars instanceof Map<?, ?> map))
        {
            throw new IllegalArgumentException("policy.learn returned " + (null == vars ? "null"
                : vars instanceof List<?> list ? "a List of " + list.size() + " elements" : vars.getClass().getName())
                + "; expected the Map of one update's log vars (for several updates per call, override "
                + "updatesPerCall: each update then gets its own hooks and train_time)");
        }
        for (final Map.Entry<?, ?> entry : map.entrySet())
        {
            final String key = String.valueOf(entry.getKey());
            if (PRIORITY.equals(key))
            {
                reportPriorities(entry.getValue(), batch, sink);
            }
            else
            {
                sink.value(key, entry.getValue());
            }
        }
    }

    private void reportPriorities(final Object value, final B batch, final LogSink sink)
    {
        final List<?> values = value instanceof double[] array ? java.util.Arrays.stream(array).boxed().toList()
            : value instanceof List<?> list ? list : null;
        if (null == values)
        {
            throw new IllegalArgumentException("log var priority: expected a list of numbers, got " + value);
        }
        final int n = values.size();
        if (priorities.length < n)
        {
            priorities = new double[n];
        }
        for (int i = 0; i < n; i++)
        {
            if (!(values.get(i) instanceof Number number))
            {
                throw new IllegalArgumentException("log var priority[" + i + "]: expected a number, got "
                    + values.get(i));
            }
            priorities[i] = number.doubleValue();
        }
        // As DI-engine's priority_info: one id pair per data item, read from the data, whatever n is.
        final List<?> items = batch instanceof List<?> list ? list : List.of();
        final int m = items.size();
        if (slots.length < m)
        {
            slots = new int[m];
            ids = new long[m];
        }
        for (int i = 0; i < m; i++)
        {
            slots[i] = (int)id(items.get(i), "replay_buffer_idx");
            ids[i] = id(items.get(i), "replay_unique_id");
        }
        sink.priority(priorities, n, slots, ids, m);
    }

    private static long id(final Object item, final String key)
    {
        final Object id = item instanceof Map<?, ?> map ? map.get(key) : null;
        if (null == id)
        {
            return -1;
        }
        if (id instanceof Number number)
        {
            return number.longValue();
        }
        throw new IllegalArgumentException(key + ": expected an integer id, got " + id);
    }
}
