package org.ding4j.data;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.ding4j.internal.JvmFlags;
import org.ding4j.torch.Threads;

/**
 * DI-engine's {@code AsyncDataLoader}: fetches batches from a {@link DataSource} ahead of the learner into a
 * bounded queue of {@code 2 x max(1, workers)} batches. As DI-engine does, the producer thread calls
 * {@code get(batch_size)} once per batch; with more than one worker, a batch that is a list of jobs
 * ({@link java.util.concurrent.Callable} items, DI-engine's callables) is split into {@code batch_size / chunk_size}
 * chunks that the workers run, each job replaced by its result in place, and batches come out in the order they were
 * fetched. A batch of plain data passes through as it is. A {@link DeviceTransfer} moves each batch to the policy's
 * device on the producer thread, ahead of use.
 * <p>
 * Threads: one producer thread (plus a pool of {@code workers} threads when workers > 1) fills an Agrona
 * one-to-one queue; one consumer (the learner's training thread) calls {@link #next()}, which waits with a backoff
 * idle strategy instead of sleeping. A failure in any loader thread reaches the consumer's next {@code next()} as a
 * {@link DataLoaderException}. {@link #close()} (any thread) stops every thread promptly; {@code next()} then
 * returns null.
 *
 * @param <T> the batch type
 */
public final class AsyncDataLoader<T> implements AutoCloseable
{
    private static final long JOIN_TIMEOUT_MS = 5_000;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final DataSource<T> source;
    private final DeviceTransfer<T> toDevice;
    private final int batchSize;
    private final int chunkSize;
    private final int workers;
    private final int capacity;
    private final OneToOneConcurrentArrayQueue<T> queue;
    private final Thread producer;
    private final ExecutorService pool;
    private volatile boolean closed;
    /** Wake-ups so far: a waiting {@link #next(long)} returns null once this moves past what its caller saw. */
    private final AtomicLong wakeUps = new AtomicLong();
    private volatile Throwable failure;
    private final IdleStrategy consumerIdle = new BackoffIdleStrategy(100, 10, 1_000, 1_000_000);

    /**
     * Builds the loader and starts its threads.
     *
     * @param source     where batches come from
     * @param batchSize  samples per batch, > 0
     * @param toDevice   moves each whole batch to the policy's device on the producer thread; null for none (see
     *                   {@link DeviceTransfer#forDevice(String)})
     * @param chunkSize  jobs per worker task, > 0, dividing batchSize (whatever the worker count, as DI-engine)
     * @param numWorkers >= 0; with 0 or 1 jobs are not run by the loader
     * @throws IllegalArgumentException naming the bad setting
     */
    public AsyncDataLoader(
        final DataSource<T> source, final int batchSize, final DeviceTransfer<T> toDevice, final int chunkSize,
        final int numWorkers)
    {
        JvmFlags.requireAgronaAccess();
        this.source = Objects.requireNonNull(source, "source");
        if (batchSize <= 0)
        {
            throw new IllegalArgumentException("batch_size: expected a positive integer, got " + batchSize);
        }
        if (numWorkers < 0)
        {
            throw new IllegalArgumentException("dataloader.num_workers: expected a non-negative integer, got "
                + numWorkers);
        }
        if (chunkSize <= 0)
        {
            throw new IllegalArgumentException("dataloader.chunk_size: expected a positive integer, got " + chunkSize);
        }
        if (0 != batchSize % chunkSize)
        {
            throw new IllegalArgumentException("dataloader.chunk_size: " + chunkSize + " must divide batch_size="
                + batchSize);
        }
        this.batchSize = batchSize;
        this.chunkSize = chunkSize;
        this.workers = numWorkers;
        this.toDevice = null != toDevice ? toDevice : DeviceTransfer.none();
        this.capacity = 2 * Math.max(1, numWorkers);
        this.queue = new OneToOneConcurrentArrayQueue<>(capacity);
        final int id = INSTANCES.incrementAndGet();
        this.pool = numWorkers > 1 ? Executors.newFixedThreadPool(numWorkers,
            r -> Threads.newThread(r, "loader-" + id + "-worker")) : null;
        this.producer = Threads.newThread(this::produce, "loader-" + id);
        producer.start();
    }

    /**
     * The next batch, waiting for it.
     *
     * @return the batch, or null once the loader is closed or woken up during the wait
     * @throws DataLoaderException if a loader thread failed
     */
    public T next()
    {
        return next(wakeUps.get());
    }

    /**
     * The next batch, waiting for it, unless woken up since the caller read {@link #wakeUps()}: a run that reads
     * it when it starts loses no wake-up sent between its stop check and its wait, and is not ended by one that an
     * earlier run left behind (a wake-up is a count, not a flag that stays set).
     *
     * @param seen what {@link #wakeUps()} returned when the caller started waiting for batches
     * @return the batch, or null once the loader is closed or {@link #wakeUp()} was called after {@code seen}
     * @throws DataLoaderException if a loader thread failed
     */
    public T next(final long seen)
    {
        final IdleStrategy idle = consumerIdle;
        idle.reset();
        while (true)
        {
            final T batch = queue.poll();
            if (null != batch)
            {
                return batch;
            }
            final Throwable t = failure;
            if (null != t)
            {
                throw new DataLoaderException(t);
            }
            if (closed || wakeUps.get() != seen)
            {
                return null;
            }
            idle.idle();
        }
    }

    /**
     * @return whether a batch is queued: the next {@link #next} returns it at once, even after a wake-up (for the one
     * consumer; the producers only add)
     */
    public boolean ready()
    {
        return !queue.isEmpty();
    }

    /** Makes a waiting {@link #next} return null (a stop signal), from any thread; the loader keeps running. */
    public void wakeUp()
    {
        wakeUps.incrementAndGet();
    }

    /** @return how many times {@link #wakeUp()} was called, for {@link #next(long)} */
    public long wakeUps()
    {
        return wakeUps.get();
    }

    /** @return the queue bound in batches */
    public int capacity()
    {
        return capacity;
    }

    private void produce()
    {
        final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 1_000_000);
        try
        {
            if (null == pool)
            {
                while (!closed)
                {
                    publish(source.get(batchSize), idle);
                }
            }
            else
            {
                producePooled(idle);
            }
        }
        catch (final InterruptedException ex)
        {
            // close() interrupts a producer that waits on the source or the workers.
            Thread.currentThread().interrupt();
        }
        catch (final Throwable t)
        {
            if (!closed)
            {
                failure = unwrap(t);
            }
        }
    }

    private void producePooled(final IdleStrategy idle) throws Exception
    {
        // Keep as many batches started as the queue could hold, so workers stay busy while the learner trains.
        final ArrayDeque<Started<T>> inFlight = new ArrayDeque<>();
        while (!closed)
        {
            while (inFlight.size() < capacity)
            {
                inFlight.add(start(source.get(batchSize)));
            }
            publish(inFlight.poll().join(), idle);
        }
    }

    /** Hands a batch's jobs to the workers, {@code chunk_size} jobs per task; a batch without jobs is ready as is. */
    private Started<T> start(final T batch)
    {
        if (!(batch instanceof List<?> items) || items.stream().noneMatch(Callable.class::isInstance))
        {
            return new Started<>(batch, List.of());
        }
        final List<Future<Object[]>> chunks = new ArrayList<>();
        for (int from = 0; from < items.size(); from += chunkSize)
        {
            final List<?> chunk = items.subList(from, Math.min(items.size(), from + chunkSize));
            chunks.add(pool.submit(() -> {
                final Object[] results = new Object[chunk.size()];
                for (int i = 0; i < results.length; i++)
                {
                    final Object item = chunk.get(i);
                    results[i] = item instanceof Callable<?> job ? job.call() : item;
                }
                return results;
            }));
        }
        return new Started<>(batch, chunks);
    }

    /** A fetched batch and, if it held jobs, the worker tasks computing their results. */
    private record Started<T>(T batch, List<Future<Object[]>> chunks)
    {
        @SuppressWarnings("unchecked")
        T join() throws Exception
        {
            if (chunks.isEmpty())
            {
                return batch;
            }
            final List<Object> results = new ArrayList<>(((List<?>)batch).size());
            for (final Future<Object[]> chunk : chunks)
            {
                results.addAll(Arrays.asList(chunk.get()));
            }
            // The batch was a List of jobs; its results take their places (DI-engine's type is just as dynamic).
            return (T)results;
        }
    }

    private void publish(final T fetched, final IdleStrategy idle) throws Exception
    {
        if (null == fetched)
        {
            throw new IllegalStateException("data source returned null");
        }
        final T batch = toDevice.apply(fetched);
        if (null == batch)
        {
            throw new IllegalStateException("device transfer returned null");
        }
        idle.reset();
        while (!closed)
        {
            if (queue.size() < capacity && queue.offer(batch))
            {
                return;
            }
            if (Thread.interrupted())
            {
                throw new InterruptedException();
            }
            idle.idle();
        }
    }

    private static Throwable unwrap(final Throwable t)
    {
        return t instanceof ExecutionException && null != t.getCause() ? t.getCause() : t;
    }

    /** Stops every loader thread promptly (waiting up to 5 s for them); later calls do nothing. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        producer.interrupt();
        if (null != pool)
        {
            pool.shutdownNow();
        }
        try
        {
            producer.join(JOIN_TIMEOUT_MS);
            if (null != pool)
            {
                pool.awaitTermination(JOIN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** @return whether the producer thread has ended (after close, or after a failure) */
    public boolean isStopped()
    {
        return !producer.isAlive();
    }
}
