package org.ding4j.learner;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * SIGINT/SIGTERM while a process trains. The handlers are installed once for everything that trains at the moment:
 * each {@code run()} registers while it runs, so runs on several threads (one learner per thread) share one
 * installation, and the handlers that were there before (the JVM's default exit) are put back when the last run
 * ends. A signal only sets flags and wakes the runs up, on the JVM's signal thread; nothing is saved inside a
 * handler.
 * <p>
 * A process that trains and nothing else (the {@code ding4j} command line) calls {@link #installForProcess()} first
 * thing: the handlers then stay for the process's life and a signal is remembered ({@link #requested()}), so a
 * stop asked for during start-up or while the summary is written is never the JVM's default exit, a run that starts
 * afterwards ends at once as interrupted, and a second signal changes nothing. Thread-safe.
 */
public final class StopSignals
{
    private static final CopyOnWriteArrayList<Runnable> WAKE_UPS = new CopyOnWriteArrayList<>();
    private static SignalStop installation;
    private static int users;
    private static volatile boolean processWide;
    private static volatile boolean requested;

    private StopSignals()
    {
    }

    /** Installs the handlers for the process's life and remembers signals; later calls do nothing. */
    public static synchronized void installForProcess()
    {
        if (!processWide)
        {
            processWide = true;
            acquire();
        }
    }

    /** @return whether a signal arrived since {@link #installForProcess()} (always false without it) */
    public static boolean requested()
    {
        return requested;
    }

    /**
     * Registers a running loop: the handlers are installed while any loop is registered.
     *
     * @param wakeUp called on the signal thread when a signal arrives (sets the loop's flag, unblocks it)
     * @return what unregisters it again (the handlers go back to the previous ones after the last)
     */
    static synchronized Runnable register(final Runnable wakeUp)
    {
        WAKE_UPS.add(wakeUp);
        acquire();
        return () -> unregister(wakeUp);
    }

    private static synchronized void unregister(final Runnable wakeUp)
    {
        if (WAKE_UPS.remove(wakeUp))
        {
            release();
        }
    }

    private static void acquire()
    {
        if (0 == users++)
        {
            installation = SignalStop.install(StopSignals::onSignal);
        }
    }

    private static void release()
    {
        if (0 == --users)
        {
            installation.restore();
            installation = null;
        }
    }

    private static void onSignal()
    {
        if (processWide)
        {
            requested = true;
        }
        WAKE_UPS.forEach(Runnable::run);
    }
}
