package org.ding4j.data;

/**
 * DI-engine's {@code get_data(batch_size)}: produces one batch of the given size. Called once per batch from the
 * loader's producer thread only (so it need not be thread-safe). With several workers, a batch that is a list of
 * {@link java.util.concurrent.Callable} jobs has its jobs run on the workers, as DI-engine's loader runs callables.
 *
 * @param <T> the batch type
 */
@FunctionalInterface
public interface DataSource<T>
{
    /**
     * @param size how many samples
     * @return the batch
     * @throws Exception any failure; it reaches the learner's next {@code next()} call
     */
    T get(int size) throws Exception;
}
