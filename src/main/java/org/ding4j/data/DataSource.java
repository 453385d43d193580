package org.ding4j.data;

/**
 * DI-engine's {@code get_data(batch_size)}: produces a batch (or a chunk of one) of the given size. Called from the
 * loader's threads; with several workers, from several threads at once.
 *
 * @param <T> the batch type
 */
@FunctionalInterface
public interface DataSource<T>
{
    /**
     * @param size how many samples
     * @return the batch or chunk
     * @throws Exception any failure; it reaches the learner's next {@code next()} call
     */
    T get(int size) throws Exception;
}
