package org.ding4j.learner;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.policy.PriorityFeedback;

/**
 * DI-engine's {@code priority_info}: the priority values of the last update that reported priorities, and the
 * replay-buffer slot and unique id of each data item of its batch (-1 where unknown). The two may differ in length, as
 * in DI-engine, where the ids are read from the data whatever number of values the policy returned. A copy; the
 * allocation-free view is {@link BaseLearner#priorities()}.
 *
 * @param priority        the priority values (|TD error| per sample, or what the policy returned)
 * @param replayBufferIdx each data item's {@code replay_buffer_idx}
 * @param replayUniqueId  each data item's {@code replay_unique_id}
 */
public record PriorityInfo(double[] priority, int[] replayBufferIdx, long[] replayUniqueId)
{
    /**
     * @param feedback the learner's feedback (count >= 0)
     * @return a copy of it
     */
    static PriorityInfo copyOf(final PriorityFeedback feedback)
    {
        final double[] priority = new double[feedback.count()];
        for (int i = 0; i < priority.length; i++)
        {
            priority[i] = feedback.value(i);
        }
        final int items = feedback.itemCount();
        final int[] slots = new int[items];
        final long[] ids = new long[items];
        for (int i = 0; i < items; i++)
        {
            slots[i] = feedback.slot(i);
            ids[i] = feedback.id(i);
        }
        return new PriorityInfo(priority, slots, ids);
    }

    /** @return DI-engine's {@code priority_info} dict of lists */
    public Map<String, Object> toMap()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        map.put("priority", Arrays.stream(priority).boxed().toList());
        map.put("replay_buffer_idx", Arrays.stream(replayBufferIdx).boxed().toList());
        map.put("replay_unique_id", Arrays.stream(replayUniqueId).boxed().toList());
        return map;
    }
}
