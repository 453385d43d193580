package org.ding4j.rl.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.LearnerHook;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.RunOutcome;
import org.ding4j.torch.Threads;

/**
 * Parallel mode ({@code pipeline.mode: parallel}), the collector/learner hand-off, for every algorithm whose parts
 * give an {@link ActingCopy}: the collector and evaluator run on their own thread with the copy of the acting net,
 * the learner in {@code start()} on the calling thread. The learner publishes its parameters every
 * {@code update_per_collect} updates and the collector refreshes its copy before each collect, both under one lock.
 * Each collect that leaves the replay at least a batch full grants {@code update_per_collect} updates, and the
 * loader's source waits for a grant, so the ratio of updates to env steps is the serial one. A new best evaluation is
 * saved by the learner's thread at its next update (the checkpoint then holds at most a few updates more than the
 * evaluated net). The replay is shared by the two threads and must be thread-safe.
 *
 * @param <B> the batch type
 */
public final class ParallelDriver<B> implements AutoCloseable
{
    /** Batches in flight at once: the loader's queue (2 with no workers), one being filled, one training. */
    private static final int RING = 6;

    private final OffPolicyRun<B> run;
    private final OffPolicyParts<B> parts;
    private final BaseLearner<B> learner;
    private final int nSample;
    private final int updatePerCollect;
    private final long maxEnvStep;
    private final long maxTrainIter;
    private final ActingCopy copy;
    private final List<B> ring = new ArrayList<>();
    private final Object lock = new Object();
    private final AtomicLong trainIter = new AtomicLong();
    private final Thread collectorThread;
    private int nextBatch;
    private long granted;
    private long issued;
    private volatile boolean stopping;
    /** True while the loader's thread samples into a ring batch: {@link #close()} waits for it (under the lock). */
    private boolean filling;
    private volatile boolean saveBestRequested;
    private volatile Throwable collectorFailure;

    /**
     * @param run   the run's shared half
     * @param parts the algorithm's half
     * @param copy  the collector thread's copy of the acting net (owned from now on)
     * @param batch makes each batch of the ring
     */
    public ParallelDriver(final OffPolicyRun<B> run, final OffPolicyParts<B> parts, final ActingCopy copy,
        final Supplier<B> batch)
    {
        this.run = run;
        this.parts = parts;
        this.copy = copy;
        this.learner = run.learner();
        this.nSample = run.config().getInt("policy.collect.n_sample");
        this.updatePerCollect = run.config().getInt("policy.learn.update_per_collect");
        this.maxEnvStep = run.config().getLong("pipeline.max_env_step");
        this.maxTrainIter = run.config().getLong("pipeline.max_train_iter");
        try
        {
            for (int i = 0; i < RING; i++)
            {
                ring.add(batch.get());
            }
        }
        catch (final RuntimeException | Error ex)
        {
            closeBatches(ex);
            copy.close();
            throw ex;
        }
        collectorThread = Threads.newThread(this::collectLoop, "collector");
    }

    /**
     * @return how the learner's run ended: {@link RunOutcome#DONE} when this driver ended it (solved, or a limit of
     *     env steps or updates reached), {@link RunOutcome#STOPPED} only for the application's own {@code stop()}
     */
    public RunOutcome run()
    {
        learner.dataSource(size -> nextBatch());
        learner.setupDataloader();
        learner.registerHook(new PublishHook());
        learner.registerHook(new StartCollectorHook());
        RunOutcome outcome;
        try
        {
            outcome = learner.start();
            // The driver ends the learner with stop() itself; a run it ended has done what it was asked to.
            synchronized (lock)
            {
                if (RunOutcome.STOPPED == outcome && stopping)
                {
                    outcome = RunOutcome.DONE;
                }
            }
        }
        catch (final RuntimeException | Error ex)
        {
            final Throwable collector = collectorFailure;
            if (null != collector && causedBy(ex, collector))
            {
                // What the learner failed on (its batch, through the loader), said as the collector's own failure.
                final IllegalStateException failed = new IllegalStateException("collector thread failed: "
                    + collector, collector);
                failed.addSuppressed(ex);
                throw failed;
            }
            if (null != collector)
            {
                // The learner failed on its own; the collector failed too, meanwhile (it ran on until the stop).
                ex.addSuppressed(collector);
            }
            throw ex;
        }
        finally
        {
            stop();
            // Whatever interrupts this thread (a run stopped by one returns with it set): the batches and the acting
            // copy the collector uses are freed next.
            Threads.joinUninterruptibly(collectorThread);
        }
        if (saveBestRequested)
        {
            saveBestRequested = false;
            run.saveBest();
        }
        if (null != collectorFailure)
        {
            throw new IllegalStateException("collector thread failed: " + collectorFailure, collectorFailure);
        }
        return outcome;
    }

    private static boolean causedBy(final Throwable failure, final Throwable cause)
    {
        for (Throwable t = failure; null != t; t = t.getCause())
        {
            if (t == cause)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * start() runs before_run (a resume's load_ckpt among them) itself, so the collector starts from a before_run
     * hook ordered after load_ckpt: it then acts with the resumed net, counters and exploration.
     */
    private final class StartCollectorHook extends LearnerHook
    {
        StartCollectorHook()
        {
            super("parallel_pipeline_start", HookRegistry.SIMPLIFIED_PRIORITY + 1, HookPosition.BEFORE_RUN);
        }

        @Override
        public void call(final HookContext context)
        {
            parts.resumeAt(Math.max(0, context.collectorEnvstep()));
            trainIter.set(context.lastIter());
            copy.publish();
            collectorThread.start();
        }
    }

    /** After each update: the algorithm's feedback, parameters published, a requested best save, the limit. */
    private final class PublishHook extends LearnerHook
    {
        PublishHook()
        {
            super("parallel_pipeline", 0, HookPosition.AFTER_ITER);
        }

        @Override
        public void call(final HookContext context)
        {
            final long iter = context.lastIter();
            trainIter.set(iter);
            parts.afterUpdate(learner);
            if (0 == iter % updatePerCollect)
            {
                synchronized (lock)
                {
                    copy.publish();
                }
            }
            if (saveBestRequested)
            {
                saveBestRequested = false;
                run.saveBest();
            }
            if (iter >= maxTrainIter)
            {
                stop();
            }
        }
    }

    private B nextBatch() throws InterruptedException
    {
        final B batch = ring.get(nextBatch);
        nextBatch = (nextBatch + 1) % ring.size();
        synchronized (lock)
        {
            while (!stopping && issued >= granted)
            {
                lock.wait();
            }
            if (stopping)
            {
                if (null != collectorFailure)
                {
                    // Through the loader into the learner's loop: it fails as a serial run does (its ERROR line,
                    // ckpt_exception), not as a run that was merely stopped.
                    throw new IllegalStateException("collector thread failed: " + collectorFailure, collectorFailure);
                }
                return batch;
            }
            issued++;
            filling = true;
            // The collector may be waiting for the learner to use up its grant.
            lock.notifyAll();
        }
        try
        {
            parts.replay().sample(batch);
        }
        finally
        {
            synchronized (lock)
            {
                filling = false;
                lock.notifyAll();
            }
        }
        return batch;
    }

    private void collectLoop()
    {
        try
        {
            while (!stopping)
            {
                if (Thread.currentThread().isInterrupted())
                {
                    // Nothing of ding4j's interrupts its collector; an env or a progress callback that restored an
                    // interrupt it caught did. Every collection would end at once on it, and this loop spin.
                    throw new InterruptedException();
                }
                synchronized (lock)
                {
                    copy.refresh();
                }
                if (run.evaluateIfDue(trainIter.get(), copy::evaluate, () -> saveBestRequested = true))
                {
                    break;
                }
                copy.collect(nSample);
                learner.collectorEnvstep(parts.envSteps());
                if (parts.replay().size() >= parts.batchSize())
                {
                    synchronized (lock)
                    {
                        granted += updatePerCollect;
                        lock.notifyAll();
                    }
                }
                if (parts.envSteps() >= maxEnvStep)
                {
                    break;
                }
                // Keep at most one collect's grant ahead, as serial does, so the collector cannot run away.
                synchronized (lock)
                {
                    while (!stopping && granted - issued > updatePerCollect)
                    {
                        lock.wait();
                    }
                }
            }
        }
        catch (final InterruptedException ex)
        {
            collectorFailure = new IllegalStateException("the collector thread was interrupted (an env or a progress "
                + "callback restoring an interrupt it caught?): it cannot collect on", ex);
        }
        catch (final Throwable t)
        {
            collectorFailure = t;
        }
        finally
        {
            if (null == collectorFailure)
            {
                stop();
            }
            else
            {
                // The learner is left to fail on its next batch (nextBatch); stopping it here could end its run as
                // a stop first.
                synchronized (lock)
                {
                    stopping = true;
                    lock.notifyAll();
                }
            }
        }
    }

    private void stop()
    {
        synchronized (lock)
        {
            stopping = true;
            lock.notifyAll();
        }
        learner.stop();
    }

    /**
     * Frees the ring's batches and the copy (each, whatever fails), once the loader's thread, which the learner stops
     * only when it closes, has finished the batch it may still be sampling into: it starts no other after this.
     */
    @Override
    public void close()
    {
        final IllegalStateException failure = new IllegalStateException("ParallelDriver: closing a batch failed");
        try
        {
            awaitNoFill();
            closeBatches(failure);
        }
        finally
        {
            copy.close();
        }
        if (failure.getSuppressed().length > 0)
        {
            throw failure;
        }
    }

    private void awaitNoFill()
    {
        boolean interrupted = false;
        synchronized (lock)
        {
            stopping = true;
            lock.notifyAll();
            while (filling)
            {
                try
                {
                    // A sample is a bounded copy out of the replay; an interrupt must not free the batch under it.
                    lock.wait();
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true;
                }
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    private void closeBatches(final Throwable failure)
    {
        for (final B batch : ring)
        {
            if (batch instanceof AutoCloseable closeable)
            {
                try
                {
                    closeable.close();
                }
                catch (final Exception ex)
                {
                    failure.addSuppressed(ex);
                }
            }
        }
    }
}
