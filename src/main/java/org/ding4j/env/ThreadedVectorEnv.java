package org.ding4j.env;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

import org.ding4j.internal.Closing;
import org.ding4j.torch.Threads;

/**
 * A {@link VectorEnv} whose envs are stepped on worker threads: worker {@code w} of {@code t} always steps the envs
 * {@code w, w + t, w + 2t, ...}, so each env stays on one thread. {@link #step} hands the actions to the workers,
 * parks until the last one is done and returns; a failure on a worker is rethrown there. Worth it where an env step
 * costs more than a thread hand-off (a few microseconds); CartPole's does not. Nothing is allocated per step. The
 * threads come from the caller's {@link ThreadFactory} (the default makes named daemon threads) and end at
 * {@link #close()}. As every {@link VectorEnv}, one thread at a time calls {@link #step}, the resets and
 * {@link #close()}.
 */
public final class ThreadedVectorEnv extends VectorEnv
{
    private final Thread[] workers;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile float[] actions;
    private volatile long generation;
    private volatile Thread waiter;

    /**
     * @param factory       makes env {@code i}
     * @param n             how many envs
     * @param threads       worker threads, in [1, n]
     * @param threadFactory makes the workers (null: daemon threads named {@code ding4j-env-<w>}, w from 0)
     * @throws IllegalArgumentException if {@code threads} is outside [1, n] (checked before any env is made)
     */
    public ThreadedVectorEnv(final IntFunction<? extends Env> factory, final int n, final int threads,
        final ThreadFactory threadFactory)
    {
        super(factory, checkThreads(n, threads));
        workers = new Thread[threads];
        try
        {
            for (int w = 0; w < threads; w++)
            {
                final int worker = w;
                final Runnable task = () -> work(worker);
                workers[w] = Objects.requireNonNull(
                    null == threadFactory ? daemon(task, w) : threadFactory.newThread(task),
                    "thread factory returned null");
            }
            for (final Thread worker : workers)
            {
                worker.start();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // The caller never gets this object to close: end the workers started so far and close the envs.
            Closing.afterFailure(List.of(this), ex);
            throw ex;
        }
    }

    /** @return {@code n}, once {@code threads} is in [1, n] ({@code n < 1} is refused by the envs' check) */
    private static int checkThreads(final int n, final int threads)
    {
        if (n >= 1 && (threads < 1 || threads > n))
        {
            throw new IllegalArgumentException("threads: expected in [1, " + n + "] (at most one per env), got "
                + threads);
        }
        return n;
    }

    private static Thread daemon(final Runnable task, final int worker)
    {
        return Threads.newThread(task, "env-" + worker);
    }

    @Override
    void stepAll(final float[] actions)
    {
        if (closed.get())
        {
            throw new IllegalStateException("ThreadedVectorEnv is closed");
        }
        this.actions = actions;
        waiter = Thread.currentThread();
        pending.set(workers.length);
        // The volatile write publishes the actions and the count to the workers, which read it first.
        generation++;
        for (final Thread worker : workers)
        {
            LockSupport.unpark(worker);
        }
        while (0 != pending.get())
        {
            LockSupport.park(this);
        }
        final Throwable failed = failure.getAndSet(null);
        if (null != failed)
        {
            if (failed instanceof RuntimeException ex)
            {
                throw ex;
            }
            if (failed instanceof Error err)
            {
                throw err;
            }
            throw new IllegalStateException(failed);
        }
    }

    private void work(final int worker)
    {
        long seen = 0;
        final int stride = workers.length;
        while (true)
        {
            while (generation == seen && !closed.get())
            {
                LockSupport.park(this);
                // An interrupt is not a stop (close is): clear it, or park would return at once for ever.
                Thread.interrupted();
            }
            // A step handed over before close is finished first, so its caller is not left waiting.
            if (generation == seen)
            {
                return;
            }
            seen = generation;
            try
            {
                final float[] step = actions;
                for (int i = worker; i < size(); i += stride)
                {
                    stepOne(i, step);
                }
            }
            catch (final Throwable t)
            {
                // The first failure is rethrown; the others ride on it.
                if (!failure.compareAndSet(null, t))
                {
                    failure.get().addSuppressed(t);
                }
            }
            finally
            {
                // Release: the caller reads the arrays after it sees the count reach zero.
                if (0 == pending.decrementAndGet())
                {
                    LockSupport.unpark(waiter);
                }
            }
        }
    }

    /** Ends the workers (waiting for them), then closes the envs. */
    @Override
    public void close()
    {
        if (!closed.compareAndSet(false, true))
        {
            return;
        }
        for (final Thread worker : workers)
        {
            LockSupport.unpark(worker);
        }
        for (final Thread worker : workers)
        {
            // Null or never started only when the constructor failed half-way.
            if (null != worker)
            {
                Threads.joinUninterruptibly(worker);
            }
        }
        super.close();
    }
}
