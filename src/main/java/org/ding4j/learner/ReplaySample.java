package org.ding4j.learner;

/**
 * A batch that knows where its samples came from in a replay buffer, so that {@link BaseLearner#learnInfo()} can
 * pair each priority with its {@code replay_buffer_idx} and {@code replay_unique_id} without the batch being a list
 * of maps (DI-engine's form, which the learner also reads).
 */
public interface ReplaySample
{
    /** @return the number of samples */
    int size();

    /**
     * @param sample sample index in the batch
     * @return the buffer slot it was drawn from
     */
    int bufferIndex(int sample);

    /**
     * @param sample sample index in the batch
     * @return its unique id, which changes when the slot is overwritten
     */
    long uniqueId(int sample);
}
