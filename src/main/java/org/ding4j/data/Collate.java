package org.ding4j.data;

import java.util.ArrayList;
import java.util.List;

/**
 * Joins the chunks of one batch, in chunk order, when the loader splits a batch across workers.
 *
 * @param <T> the batch type
 */
@FunctionalInterface
public interface Collate<T>
{
    /**
     * @param chunks the chunks, in order
     * @return the batch
     */
    T merge(List<T> chunks);

    /**
     * @param <E> element type
     * @return concatenation of list chunks (DI-engine's batches are lists of transitions)
     */
    static <E> Collate<List<E>> lists()
    {
        return chunks -> {
            final List<E> batch = new ArrayList<>();
            chunks.forEach(batch::addAll);
            return batch;
        };
    }
}
