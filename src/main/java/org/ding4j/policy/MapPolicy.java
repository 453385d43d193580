package org.ding4j.policy;

import java.util.List;
import java.util.Map;

/**
 * DI-engine's way of writing a policy: {@link #learn} returns its log vars as a map (or a list of maps, one per
 * update) and the learner routes them. This base class adapts those maps onto the {@link LogSink}, so the learner
 * has one train path for both styles; it allocates what the maps allocate. A {@code priority} entry in the (last)
 * map is taken out (the policy's map is not changed) and reported with the ids that each item of a batch of maps
 * carries under {@code replay_buffer_idx} and {@code replay_unique_id} (-1 where absent).
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
     * One training call.
     *
     * @param batch the batch
     * @return a map of log vars, or a list of maps (one per update)
     */
    protected abstract Object learn(B batch);

    /** Map keys need no registration. */
    @Override
    public void registerLogVars(final LogSink sink)
    {
    }

    @Override
    public final void forward(final B batch, final LogSink sink)
    {
        final List<Map<?, ?>> updates = updatesOf(learn(batch));
        for (int u = 0; u < updates.size(); u++)
        {
            if (u > 0)
            {
                sink.nextUpdate();
            }
            for (final Map.Entry<?, ?> entry : updates.get(u).entrySet())
            {
                final String key = String.valueOf(entry.getKey());
                if (PRIORITY.equals(key) && u == updates.size() - 1)
                {
                    reportPriorities(entry.getValue(), batch, sink);
                }
                else
                {
                    sink.value(key, entry.getValue());
                }
            }
        }
    }

    private static List<Map<?, ?>> updatesOf(final Object out)
    {
        if (out instanceof Map<?, ?> map)
        {
            return List.of(map);
        }
        if (out instanceof List<?> list)
        {
            for (final Object element : list)
            {
                if (!(element instanceof Map))
                {
                    throw new IllegalArgumentException("policy.learn returned a list holding "
                        + (null == element ? "null" : element.getClass().getName()) + "; expected maps of log vars");
                }
            }
            @SuppressWarnings("unchecked")
            final List<Map<?, ?>> maps = (List<Map<?, ?>>)list;
            return maps;
        }
        throw new IllegalArgumentException("policy.learn returned " + (null == out ? "null" : out.getClass().getName())
            + "; expected a Map of log vars or a List of them");
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
            slots = new int[n];
            ids = new long[n];
        }
        final List<?> items = batch instanceof List<?> list ? list : List.of();
        for (int i = 0; i < n; i++)
        {
            if (!(values.get(i) instanceof Number number))
            {
                throw new IllegalArgumentException("log var priority[" + i + "]: expected a number, got "
                    + values.get(i));
            }
            priorities[i] = number.doubleValue();
            final Object item = i < items.size() ? items.get(i) : null;
            slots[i] = (int)id(item, "replay_buffer_idx");
            ids[i] = id(item, "replay_unique_id");
        }
        sink.priority(priorities, slots, ids, n);
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
