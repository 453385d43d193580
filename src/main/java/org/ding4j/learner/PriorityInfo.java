package org.ding4j.learner;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.policy.PriorityFeedback;

/**
 * DI-engine's {@code priority_info}: one priority per sample of the last update that reported priorities, with the
 * replay-buffer slot and unique id the sample was drawn with (-1 where unknown). A copy; the allocation-free view is
 * {@link BaseLearner#priorities()}.
 *
 * @param priority        |TD error| or another priority per sample
 * @param replayBufferIdx each sample's {@code replay_buffer_idx}
 * @param replayUniqueId  each sample's {@code replay_unique_id}
 */
public record PriorityInfo(double[] priority, int[] replayBufferIdx, long[] replayUniqueId)
{
    /**
     * @param feedback the learner's feedback (count >= 0)
     * @return a copy of it
     */
    static PriorityInfo copyOf(final PriorityFeedback feedback)
    {
        final int n = feedback.count();
        final double[] priority = new double[n];
        final int[] slots = new int[n];
        final long[] ids = new long[n];
        for (int i = 0; i < n; i++)
        {
            priority[i] = feedback.value(i);
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
