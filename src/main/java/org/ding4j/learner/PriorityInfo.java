package org.ding4j.learner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the replay buffer needs to update priorities after an update: one priority per sample and the ids the
 * samples were drawn with.
 *
 * @param priority        |TD error| or another priority per sample
 * @param replayBufferIdx each sample's {@code replay_buffer_idx} (null where absent)
 * @param replayUniqueId  each sample's {@code replay_unique_id} (null where absent)
 */
public record PriorityInfo(Object priority, List<Object> replayBufferIdx, List<Object> replayUniqueId)
{
    /** @return DI-engine's {@code priority_info} dict */
    public Map<String, Object> toMap()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        map.put("priority", priority);
        map.put("replay_buffer_idx", replayBufferIdx);
        map.put("replay_unique_id", replayUniqueId);
        return map;
    }
}
