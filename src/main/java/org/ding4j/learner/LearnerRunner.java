package org.ding4j.learner;

import java.util.function.IntSupplier;

import org.ding4j.dist.StopVote;
import org.ding4j.hook.HookPosition;

/**
 * The one training lifecycle, shared by {@code start()} and every {@link TrainingLoop}: {@code before_run} hooks;
 * per update {@code prepare}, the stop vote (across ranks when distributed; carried by the last update's log reduce
 * when the loop promised the data: {@link TrainingLoop#nextReady()}), {@code update}; the interrupt checkpoint
 * on SIGINT/SIGTERM or an interrupt of the loop's thread (its status set again when the run returns); the exception
 * checkpoint, the peers told and the failure rethrown; {@code after_run} hooks in
 * {@code finally}. A run whose {@code before_run} failed (a refused resume) trained nothing and writes nothing: no
 * exception checkpoint, no {@code after_run}. {@link #requestEnd()} and {@link #close()} may be called from any
 * thread: the loop ends after the update in flight.
 * <p>
 * The loop owns close, as Agrona's {@code AgentRunner} does: {@link #close()} while a loop runs only asks it to end,
 * and the loop runs the closing (the learner's resources) in its {@code finally}, after {@code after_run}, so nothing
 * is closed under a running update, whether close came from a hook on the loop's thread or from another thread.
 * With no loop running, close runs the closing at once on the caller's thread. It runs once.
 */
final class LearnerRunner
{
    /** Closes the learner's resources; throws the first failure with the others suppressed. */
    interface Closer
    {
        void closeResources();
    }

    private final BaseLearner<?> learner;
    private final Closer closer;
    private final Object lock = new Object();
    /** The thread inside {@link #run}, or null; guarded by {@link #lock}. */
    private Thread loopThread;
    /**
     * close() was called: no more runs; written under {@link #lock}, volatile so that every train() can read it
     * without taking the lock.
     */
    private volatile boolean closed;
    /** The closing has run (successfully or not); guarded by {@link #lock}. */
    private boolean closeDone;
    private RuntimeException closeFailure;
    /** The first close() came from the loop's own thread (a hook): the run rethrows the closing's failure. */
    private boolean closeAskedByLoop;
    private volatile boolean endRequested;
    private volatile boolean signalled;
    /**
     * The loop's thread was interrupted during this run (the application cancelling it, {@code Future.cancel(true)}):
     * taken as a signal, and the interrupt status set again when the run returns; the loop's thread only.
     */
    private boolean interruptTaken;
    private volatile Runnable wakeUp = () -> { };
    private StopVote vote;
    private final LearnerControl control;

    LearnerRunner(final BaseLearner<?> learner, final Closer closer)
    {
        this.learner = learner;
        this.closer = closer;
        this.control = new LearnerControl(() -> learner.checkpoints().saveRequested(), () -> endRequested || signalled);
    }

    LearnerControl control()
    {
        return control;
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
            requireOpen();
            if (null != loopThread)
            {
                throw new IllegalStateException("learner " + learner.instanceName() + " is already running");
            }
            loopThread = Thread.currentThread();
            // Its before_run hooks run before the first update boundary: a save asked from one is refused at once.
            control.trainsOn(loopThread);
            // A stop() asked before this run got going (from a thread that started it a moment ago) counts: it is
            // cleared when a run ends, not when one begins.
            signalled = false;
        }
        // Woken by a signal when the application installed the handlers; a stop the process already received counts.
        final Runnable unregister = StopSignals.register(this::onSignal);
        // An interrupt is taken off the thread here and in the loop, so that the saves of the stop it asks for run
        // (a FileChannel an interrupted thread touches closes), and put back when the run returns.
        interruptTaken = false;
        if (StopSignals.requested() | tookInterrupt())
        {
            signalled = true;
        }
        Throwable failure = null;
        RunOutcome outcome = null;
        // Whether before_run completed: a run that failed there (a refused resume, say) trained nothing, so it saves
        // nothing either (no exception checkpoint of an untrained net, no after_run save over the file it tried to
        // load), as DI-engine's learner never reaches after_run when before_run raises.
        boolean started = false;
        try
        {
            learner.callHook(HookPosition.BEFORE_RUN);
            started = true;
            outcome = loop(loop, iterations);
            if (RunOutcome.INTERRUPTED == outcome)
            {
                learner.checkpoints().saveOnInterrupt();
            }
        }
        catch (final Throwable t)
        {
            failure = t;
            learner.log().rethrown((started ? "training failed at iteration " : "before_run failed at iteration ")
                + learner.trainIter(), t);
            if (started)
            {
                learner.checkpoints().saveQuietly(BaseLearner.EXCEPTION_CHECKPOINT, t);
            }
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
                if (started)
                {
                    learner.callHook(HookPosition.AFTER_RUN);
                }
            }
            catch (final RuntimeException | Error e)
            {
                if (null == failure)
                {
                    // Logged as a failure before it is (a run's failure is logged, then thrown, wherever it came).
                    learner.log().rethrown("after_run failed at iteration " + learner.trainIter(), e);
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
            final boolean closeNow;
            final boolean rethrowClose;
            synchronized (lock)
            {
                loopThread = null;
                // This run took its stop; the next one starts afresh (unless the learner is closed).
                endRequested = closed;
                closeNow = closed;
                rethrowClose = closeAskedByLoop;
                lock.notifyAll();
            }
            if (closeNow)
            {
                // close() came during the run (from a hook or another thread): the loop closes, now that it is done.
                // A closer on another thread gets the failure from its close(); one on this thread, from here.
                final RuntimeException e = runClose();
                if (rethrowClose && null != e)
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
            }
        }
        if (interruptTaken)
        {
            Thread.currentThread().interrupt();
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
        // The decision for this update, when the last update's log reduce carried it.
        int carried = StopVote.NOT_CARRIED;
        final IntSupplier ahead = () -> signalled ? StopVote.SIGNAL : endRequested ? StopVote.END
            : loop.nextReady() ? StopVote.CONTINUE : StopVote.UNSURE;
        for (long i = 0; i < iterations; i++)
        {
            // A pause or a checkpoint asked for from another thread happens here, between two updates.
            control.between();
            if (tookInterrupt())
            {
                signalled = true;
            }
            final int agreed;
            if (StopVote.NOT_CARRIED == carried)
            {
                // A stop asked for during the last update needs no preparation (a collect, a batch) before it acts.
                final boolean more = !signalled && !endRequested && loop.prepare();
                if (StopSignals.requested() | tookInterrupt())
                {
                    // A signal the loop saw (a collection it cut short) before its wake-up reached this run, or an
                    // interrupt that came during the preparation.
                    signalled = true;
                }
                final int wish = signalled ? StopVote.SIGNAL : endRequested || !more ? StopVote.END
                    : StopVote.CONTINUE;
                // Every rank votes before each update, so all stop before the same one (its collectives included).
                agreed = null == vote ? wish : vote.vote(wish);
            }
            else
            {
                agreed = carried;
                // Every rank agreed to train this update (a signal since then acts after it, on the next vote).
                if (StopVote.CONTINUE == agreed && !loop.prepare())
                {
                    throw new IllegalStateException("the training loop's nextReady() promised update " + i
                        + "'s data, and every rank agreed to train it, but its prepare() found none");
                }
            }
            if (StopVote.SIGNAL == agreed)
            {
                signalled = true;
                return RunOutcome.INTERRUPTED;
            }
            if (StopVote.END == agreed)
            {
                return endRequested ? RunOutcome.STOPPED : RunOutcome.DONE;
            }
            if (null != vote)
            {
                vote.carry(ahead);
            }
            loop.update();
            carried = null == vote ? StopVote.NOT_CARRIED : vote.carried();
        }
        return RunOutcome.DONE;
    }

    /** @return whether the loop's thread was interrupted since the last look (the status cleared, remembered) */
    private boolean tookInterrupt()
    {
        if (Thread.interrupted())
        {
            interruptTaken = true;
            return true;
        }
        return false;
    }

    private void onSignal()
    {
        // Runs on the JVM's signal thread: set a flag only; the training thread saves after the update in flight.
        signalled = true;
        wake();
    }

    private void wake()
    {
        wakeUp.run();
        control.wake();
    }

    /** @throws IllegalStateException naming the learner, if {@link #close} was called */
    void requireOpen()
    {
        if (closed)
        {
            throw closedError();
        }
    }

    /** @return what a call on the closed learner throws */
    IllegalStateException closedError()
    {
        return new IllegalStateException("learner " + learner.instanceName() + " is closed");
    }

    /**
     * @return whether the calling thread may train no more: the learner is closed and this is not the thread of a
     *     {@link #run} that closes once its update in flight is done
     */
    boolean closedToCaller()
    {
        // Each train() asks: the lock only once the learner is closed, for the loop thread it then reads.
        if (!closed)
        {
            return false;
        }
        synchronized (lock)
        {
            return Thread.currentThread() != loopThread;
        }
    }

    /** Asks a running loop to return after the update in flight, or the next run to return at once. */
    void requestEnd()
    {
        endRequested = true;
        wake();
    }

    /**
     * Refuses later runs and closes: at once when no loop runs; else asks the loop to end after its update in flight
     * and lets it close in its {@code finally}. From another thread it waits until the closing has run (an interrupt
     * ends the wait early, kept on the thread: the loop still closes); from the loop's own thread (a hook) it returns
     * at once. A second call is harmless: it returns when the first closing has run (or at once on the loop's thread).
     *
     * @throws RuntimeException the closing's first failure (others suppressed), to the first caller that waited for
     *                          it or ran it; a close asked for on the loop's thread has it thrown from the run instead
     */
    void close()
    {
        final boolean first;
        final boolean closeHere;
        synchronized (lock)
        {
            first = !closed;
            closed = true;
            endRequested = true;
            closeHere = first && null == loopThread;
            closeAskedByLoop |= first && Thread.currentThread() == loopThread;
        }
        // A thread paused in its own train() loop (no run()) waits on the control: it must see the close too.
        wake();
        if (closeHere)
        {
            final RuntimeException e = runClose();
            if (null != e)
            {
                throw e;
            }
            return;
        }
        wake();
        synchronized (lock)
        {
            while (!closeDone && Thread.currentThread() != loopThread)
            {
                try
                {
                    lock.wait();
                }
                catch (final InterruptedException ex)
                {
                    // The loop closes when it ends whether or not anyone waits for it.
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (first && closeDone && null != closeFailure && !closeAskedByLoop)
            {
                throw closeFailure;
            }
        }
    }

    private RuntimeException runClose()
    {
        RuntimeException failure = null;
        try
        {
            closer.closeResources();
        }
        catch (final RuntimeException e)
        {
            failure = e;
        }
        finally
        {
            // Also if an Error escapes the closer: a close() waiting for the closing must not wait forever.
            synchronized (lock)
            {
                closeFailure = failure;
                closeDone = true;
                lock.notifyAll();
            }
        }
        return failure;
    }
}
