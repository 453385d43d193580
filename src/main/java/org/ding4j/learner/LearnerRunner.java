package org.ding4j.learner;

import org.ding4j.dist.StopVote;
import org.ding4j.hook.HookPosition;

/**
 * The one training lifecycle, shared by {@code start()} and every {@link TrainingLoop}: {@code before_run} hooks;
 * per update {@code prepare}, the stop vote (across ranks when distributed), {@code update}; the interrupt checkpoint
 * on SIGINT/SIGTERM; the exception checkpoint, the peers told and the failure rethrown; {@code after_run} hooks in
 * {@code finally}. {@link #requestEnd()} and {@link #close()} may be called from any thread: the loop ends after the
 * update in flight, and {@code close()} waits for it (as Agrona's {@code AgentRunner.close} does) so that the
 * learner's resources are not closed under a running update.
 */
final class LearnerRunner
{
    private final BaseLearner<?> learner;
    private final Object lock = new Object();
    /** The thread inside {@link #run}, or null; guarded by {@link #lock}. */
    private Thread loopThread;
    private boolean closed;
    private volatile boolean endRequested;
    private volatile boolean signalled;
    private volatile Runnable wakeUp = () -> { };
    private StopVote vote;

    LearnerRunner(final BaseLearner<?> learner)
    {
        this.learner = learner;
    }

    void vote(final StopVote vote)
    {
        this.vote = vote;
    }

    /** @param wakeUp unblocks a loop waiting for data (the data loader's {@code wakeUp}) */
    void wakeUp(final Runnable wakeUp)
    {
        this.wakeUp = wakeUp;
    }

    RunOutcome run(final TrainingLoop loop, final long iterations)
    {
        synchronized (lock)
        {
            if (closed)
            {
                throw new IllegalStateException("learner " + learner.instanceName() + " is closed");
            }
            if (null != loopThread)
            {
                throw new IllegalStateException("learner " + learner.instanceName() + " is already running");
            }
            loopThread = Thread.currentThread();
            endRequested = false;
            signalled = false;
        }
        // One installation of the handlers for all runs in flight; a stop the process already received counts.
        final Runnable unregister = StopSignals.register(this::onSignal);
        if (StopSignals.requested())
        {
            signalled = true;
        }
        Throwable failure = null;
        RunOutcome outcome = null;
        try
        {
            learner.callHook(HookPosition.BEFORE_RUN);
            outcome = loop(loop, iterations);
            if (RunOutcome.INTERRUPTED == outcome)
            {
                learner.saveInterruptCheckpoint();
            }
        }
        catch (final Throwable t)
        {
            failure = t;
            learner.log().error("training failed at iteration " + learner.trainIter(), t);
            learner.saveQuietly(BaseLearner.EXCEPTION_CHECKPOINT, t);
            if (null != vote)
            {
                vote.failed(t);
            }
        }
        finally
        {
            unregister.run();
            try
            {
                learner.callHook(HookPosition.AFTER_RUN);
            }
            catch (final RuntimeException | Error e)
            {
                if (null == failure)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
            synchronized (lock)
            {
                loopThread = null;
                lock.notifyAll();
            }
        }
        if (failure instanceof RuntimeException re)
        {
            throw re;
        }
        if (failure instanceof Error error)
        {
            throw error;
        }
        if (null != failure)
        {
            throw new IllegalStateException("training failed: " + failure, failure);
        }
        return outcome;
    }

    private RunOutcome loop(final TrainingLoop loop, final long iterations) throws Exception
    {
        final StopVote vote = this.vote;
        for (long i = 0; i < iterations; i++)
        {
            // A stop asked for during the last update needs no preparation (a collect, a batch) before it acts.
            final boolean more = !signalled && !endRequested && loop.prepare();
            final int wish = signalled ? StopVote.SIGNAL : endRequested || !more ? StopVote.END : StopVote.CONTINUE;
            // Every rank votes before each update, so all stop before the same one (its collectives included).
            final int agreed = null == vote ? wish : vote.vote(wish);
            if (StopVote.SIGNAL == agreed)
            {
                signalled = true;
                return RunOutcome.INTERRUPTED;
            }
            if (StopVote.END == agreed)
            {
                return endRequested ? RunOutcome.STOPPED : RunOutcome.DONE;
            }
            loop.update();
        }
        return RunOutcome.DONE;
    }

    private void onSignal()
    {
        // Runs on the JVM's signal thread: set a flag only; the training thread saves after the update in flight.
        signalled = true;
        wakeUp.run();
    }

    /** Asks a running loop to return after the update in flight. */
    void requestEnd()
    {
        endRequested = true;
        wakeUp.run();
    }

    /**
     * Refuses later runs, asks a running loop to end and waits until it has (unless called from the loop's own
     * thread, e.g. from a hook). An interrupt ends the wait early and is kept on the thread.
     */
    void close()
    {
        synchronized (lock)
        {
            closed = true;
            endRequested = true;
        }
        wakeUp.run();
        synchronized (lock)
        {
            while (null != loopThread && Thread.currentThread() != loopThread)
            {
                try
                {
                    lock.wait();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
