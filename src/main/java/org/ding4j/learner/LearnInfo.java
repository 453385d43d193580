package org.ding4j.learner;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * DI-engine's {@code learn_info}: sent to the collector/commander side after updates.
 *
 * @param learnerStep  completed updates
 * @param priorityInfo the last reported priorities, or null when the policy gave none
 * @param learnerDone  whether a run ({@code start()}) ended normally
 */
public record LearnInfo(long learnerStep, PriorityInfo priorityInfo, boolean learnerDone)
{
    /** @return {@code {learner_step, priority_info, learner_done}} with an empty map for absent priorities */
    public Map<String, Object> toMap()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        map.put("learner_step", learnerStep);
        map.put("priority_info", null == priorityInfo ? new LinkedHashMap<>() : priorityInfo.toMap());
        map.put("learner_done", learnerDone);
        return map;
    }
}
