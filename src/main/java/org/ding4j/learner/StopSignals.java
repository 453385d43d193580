package org.ding4j.learner;

import java.util.concurrent.CopyOnWriteArrayList;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGINT/SIGTERM as a stop for every learner run, only when the application asks for it: a library inside someone
 * else's process takes no signal, so {@code run()} alone installs nothing and a signal stays the host's (its
 * shutdown hooks, its own handlers). An application that wants a signal to stop training cleanly (the {@code ding4j}
 * command line does) calls {@link #installForProcess()} once, first thing, as Agrona's
 * {@code ShutdownSignalBarrier} is made by the application: the handlers then stay for the process's life, a signal
 * is remembered ({@link #requested()}) and wakes every run in flight (each {@code run()} registers while it runs),
 * so a stop asked for during start-up or while the summary is written is never the JVM's default exit, a run that
 * starts afterwards ends at once as interrupted, and a second signal changes nothing. A signal only sets flags and
 * wakes the runs up, on the JVM's signal thread; nothing is saved inside a handler. An embedder without it stops a
 * learner with {@code learner.stop()}. Thread-safe.
 */
public final class StopSignals
{
    private static final CopyOnWriteArrayList<Runnable> WAKE_UPS = new CopyOnWriteArrayList<>();
    private static volatile boolean processWide;
    private static volatile boolean requested;
    /** Set at a signal's arrival, before the wake-ups run (requested is set after them). */
    private static volatile boolean arrived;

    private StopSignals()
    {
    }

    /** Installs the handlers for the process's life and remembers signals; later calls do nothing. */
    public static synchronized void installForProcess()
    {
        if (!processWide)
        {
            processWide = true;
            final SignalHandler handler = signal -> onSignal();
            for (final String name : new String[] {"INT", "TERM"})
            {
                try
                {
                    Signal.handle(new Signal(name), handler);
                }
                catch (final IllegalArgumentException ex)
                {
                    // The JVM reserves this signal here (started with -Xrs, say); its default behaviour stays.
                }
            }
        }
    }

    /** @return whether a signal arrived since {@link #installForProcess()} (always false without it) */
    public static boolean requested()
    {
        return requested;
    }

    /**
     * @return whether work on the calling thread that can end early (a collection, an evaluation) should: a signal
     *     arrived ({@link #requested()}), or the thread was interrupted (an application cancelling its training
     *     thread; the status stays set, for the learner to take as a stop)
     */
    public static boolean stopAsked()
    {
        return requested || Thread.currentThread().isInterrupted();
    }

    /**
     * Registers a running loop, to be woken by a signal once {@link #installForProcess()} installed the handlers.
     *
     * @param wakeUp called on the signal thread when a signal arrives (sets the loop's flag, unblocks it)
     * @return what unregisters it again
     */
    static Runnable register(final Runnable wakeUp)
    {
        WAKE_UPS.add(wakeUp);
        return () -> WAKE_UPS.remove(wakeUp);
    }

    /**
     * Interrupts a thread when a signal arrives, for a blocking step of a start-up that ends on an interrupt (a
     * data-parallel rank's rendezvous, {@code DistTraining.join}), which no learner run can wake yet: a signal that
     * already came interrupts it at once. Nothing happens without {@link #installForProcess()}.
     *
     * @param thread the thread doing the step
     * @return what ends the arrangement, on that thread after the step: it also clears the interrupt a signal made
     *     (interruptible channels the thread uses later, a checkpoint's, would otherwise close at once), and leaves
     *     one the application made
     */
    public static Runnable interruptOnSignal(final Thread thread)
    {
        final Interrupter interrupter = new Interrupter(thread);
        final Runnable unregister = register(interrupter);
        // A signal that arrived before the registration (its wake-ups already ran) interrupts at once.
        if (arrived)
        {
            interrupter.run();
        }
        return () -> {
            unregister.run();
            interrupter.end();
        };
    }

    /**
     * {@link #interruptOnSignal}'s wake-up. Its monitor orders a late wake-up (the signal thread runs a copy of the
     * list, so it may come after the unregistration) against the end: after the end, a wake-up does nothing.
     */
    private static final class Interrupter implements Runnable
    {
        private final Thread thread;
        private boolean ended;
        private boolean interrupted;

        Interrupter(final Thread thread)
        {
            this.thread = thread;
        }

        @Override
        public synchronized void run()
        {
            if (!ended)
            {
                interrupted = true;
                thread.interrupt();
            }
        }

        synchronized void end()
        {
            ended = true;
            if (interrupted && Thread.currentThread() == thread)
            {
                Thread.interrupted();
            }
        }
    }

    private static void onSignal()
    {
        // Before the wake-ups: a registration that comes while they run either is among them or sees this.
        arrived = true;
        // The runs first: a collection or evaluation that sees requested() end it early, and the run's vote must then
        // already know the signal (else it would take the early end for the run's own and finish as DONE).
        WAKE_UPS.forEach(Runnable::run);
        if (processWide)
        {
            requested = true;
        }
    }
}
