package org.ding4j.policy;

import java.util.List;
import java.util.Map;

/**
 * A policy's learn mode, as the learner drives it (DI-engine's {@code policy.learn_mode}).
 * <p>
 * {@link #forward} does one update (or several) and returns its log vars the DI-engine way: one
 * {@code Map<String, Object>} or a {@code List} of them, one per update. A policy that must not allocate per update
 * implements {@link SinkPolicy} instead and writes primitives into the learner's sink. Called from the training
 * thread only.
 */
public interface Policy
{
    /**
     * One training call.
     *
     * @param data   the batch (DI-engine: a list of transition maps)
     * @param kwargs extra arguments; never null
     * @return a map of log vars, or a list of maps (one per update); a {@code priority} entry in the (last) map is
     *         taken out by the learner
     */
    Object forward(Object data, Map<String, Object> kwargs);

    /** @return the log vars the monitor averages and the log table shows */
    List<String> monitorVars();

    /** @return a description the learner logs when {@code log_policy} is on */
    default String info()
    {
        return getClass().getSimpleName();
    }

    /**
     * DI-engine's {@code get_attribute}: at least {@code batch_size} (an Integer) and {@code device} (a String)
     * for the data loader.
     *
     * @param name attribute name
     * @return its value
     * @throws IllegalArgumentException if the policy has no such attribute
     */
    default Object attribute(final String name)
    {
        throw new IllegalArgumentException(getClass().getSimpleName() + " has no attribute " + name);
    }

    /**
     * @return everything a resume needs (model, target model, optimizer, ...), tensors included; the checkpoint
     *         writer owns what it receives for the duration of the write
     */
    Map<String, Object> stateDict();

    /**
     * Restores a state produced by {@link #stateDict()} (less the learner's own {@code last_iter}/{@code last_step}).
     *
     * @param state the state
     */
    void loadStateDict(Map<String, Object> state);
}
