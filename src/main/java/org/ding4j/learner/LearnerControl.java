package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Control of a running learner from other threads (a JMX client, a service's control plane): pause and resume
 * between updates, and a checkpoint saved now. The training thread carries out each request at its next update
 * boundary (before each update of {@code run()} and {@code start()}, and at the start of each {@code train()}
 * call), so nothing touches the policy under a running update. A paused learner waits there until
 * {@link #resume()}, {@code stop()}, {@code close()} or a stop signal; on a distributed job its peers wait for it in
 * their next collective.
 * <p>
 * The check the training thread pays per update is one volatile read.
 */
public final class LearnerControl
{
    /** Saves a checkpoint on the training thread and says where. */
    interface Saver
    {
        Path save() throws IOException;
    }

    private final Object lock = new Object();
    /**
     * The thread that last came to an update boundary: the one a save request must not come from. Plain, not
     * volatile (no fence per update): the training thread always sees its own write, and another thread, even a
     * stale value, is never itself unless it trained before.
     */
    private Thread trainingThread;
    private final ArrayDeque<CompletableFuture<Path>> saves = new ArrayDeque<>();
    private final Saver saver;
    private final BooleanSupplier ending;
    /** Something waits for the training thread: a pause or a save. Read per update without the lock. */
    private volatile boolean pending;
    /** Guarded by {@link #lock}. */
    private boolean paused;
    /** The training thread waits in a pause now; guarded by {@link #lock}. */
    private boolean waiting;

    LearnerControl(final Saver saver, final BooleanSupplier ending)
    {
        this.saver = saver;
        this.ending = ending;
    }

    /** Asks the training thread to wait before its next update until {@link #resume()}; from any thread. */
    public void pause()
    {
        synchronized (lock)
        {
            paused = true;
            pending = true;
        }
    }

    /** Ends a pause; from any thread. */
    public void resume()
    {
        synchronized (lock)
        {
            paused = false;
            pending = !saves.isEmpty();
            lock.notifyAll();
        }
    }

    /** @return whether a pause is asked for (the training thread may still be finishing its update) */
    public boolean paused()
    {
        synchronized (lock)
        {
            return paused;
        }
    }

    /** @return whether the training thread is waiting in a pause now */
    public boolean waiting()
    {
        synchronized (lock)
        {
            return waiting;
        }
    }

    /**
     * Saves a checkpoint ({@code iteration_N.pth.tar} in the checkpoint folder, rank 0) at the training thread's
     * next update boundary, and waits for it.
     *
     * @param timeout how long to wait for the training thread
     * @return the file written
     * @throws TimeoutException     if no update boundary came within the timeout (the request is withdrawn: it
     *                              will not save later)
     * @throws IOException          if the write failed (an older file of that name stays intact)
     * @throws InterruptedException if interrupted while waiting (the request is withdrawn unless it already runs)
     * @throws IllegalStateException if called on the training thread itself (from a hook, say), which would wait for
     *                               its own next update boundary: it saves with {@code checkpoints().save} instead
     */
    public Path saveCheckpoint(final Duration timeout) throws IOException, TimeoutException, InterruptedException
    {
        if (Thread.currentThread() == trainingThread)
        {
            throw new IllegalStateException("saveCheckpoint waits for the training thread, and this is it: save with "
                + "learner.checkpoints().save(name) here");
        }
        final CompletableFuture<Path> request = new CompletableFuture<>();
        synchronized (lock)
        {
            saves.add(request);
            pending = true;
            lock.notifyAll();
        }
        final boolean interrupted;
        try
        {
            return result(request, timeout.toNanos());
        }
        catch (final TimeoutException | InterruptedException ex)
        {
            interrupted = ex instanceof InterruptedException;
            synchronized (lock)
            {
                if (saves.remove(request))
                {
                    pending = paused || !saves.isEmpty();
                    if (ex instanceof TimeoutException)
                    {
                        throw new TimeoutException("no update boundary within " + timeout.toMillis()
                            + " ms: the learner is not training; nothing was saved");
                    }
                    throw ex;
                }
            }
        }
        // Taken by the training thread already: its result follows shortly; an interrupt is kept for the caller.
        final Path saved = result(request, Long.MAX_VALUE);
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        return saved;
    }

    /** The save's file, or what made it fail: an {@link IOException} as it is, anything else wrapped. */
    private static Path result(final CompletableFuture<Path> request, final long nanos)
        throws IOException, TimeoutException, InterruptedException
    {
        try
        {
            return request.get(nanos, TimeUnit.NANOSECONDS);
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof IOException io)
            {
                throw io;
            }
            throw new IllegalStateException("checkpoint save failed: " + ex.getCause(), ex.getCause());
        }
    }

    /** @param thread the thread a run is starting on (its before_run hooks come before any update boundary) */
    void trainsOn(final Thread thread)
    {
        trainingThread = thread;
    }

    /** On the training thread at an update boundary: carries out what is pending. One volatile read when nothing is. */
    void between()
    {
        trainingThread = Thread.currentThread();
        if (pending)
        {
            service();
        }
    }

    /** Ends a pause's wait because the loop is to end (stop, close, signal); the pause itself stays asked for. */
    void wake()
    {
        synchronized (lock)
        {
            lock.notifyAll();
        }
    }

    private void service()
    {
        synchronized (lock)
        {
            while (true)
            {
                final CompletableFuture<Path> request = saves.poll();
                if (null != request)
                {
                    save(request);
                    continue;
                }
                if (!paused || ending.getAsBoolean())
                {
                    break;
                }
                waiting = true;
                try
                {
                    lock.wait();
                }
                catch (final InterruptedException ex)
                {
                    // An interrupted training thread stops waiting; the interrupt stays for the code that owns it.
                    Thread.currentThread().interrupt();
                    break;
                }
                finally
                {
                    waiting = false;
                }
            }
            pending = paused || !saves.isEmpty();
        }
    }

    /** Runs under the lock: pause and resume wait for a save in progress, which is what an operator expects. */
    private void save(final CompletableFuture<Path> request)
    {
        try
        {
            request.complete(saver.save());
        }
        catch (final IOException | RuntimeException ex)
        {
            request.completeExceptionally(ex);
        }
    }
}
