package org.ding4j.learner;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * SIGINT/SIGTERM for a whole process that trains: once {@link #installForProcess()} has run (the {@code ding4j}
 * command line does it first thing), a signal at any moment only sets a flag, so a stop asked for during start-up
 * or while the summary is written is never the JVM's default exit: the learner's {@code run()} sees the flag when it
 * starts or before its next update and ends as interrupted, and a second signal changes nothing. Without it (a
 * library user), each {@code run()} installs handlers of its own for its duration, as before.
 * <p>
 * Thread-safe; the handler runs on the JVM's signal thread and only sets the flag and calls the registered wake-ups.
 */
public final class StopSignals
{
    private static final CopyOnWriteArrayList<Runnable> WAKE_UPS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;
    private static volatile boolean requested;

    private StopSignals()
    {
    }

    /** Installs the process's handlers once; later calls do nothing. */
    public static synchronized void installForProcess()
    {
        if (!installed)
        {
            SignalStop.install(StopSignals::onSignal);
            installed = true;
        }
    }

    /** @return whether the process-wide handlers are installed */
    public static boolean installed()
    {
        return installed;
    }

    /** @return whether a signal arrived since {@link #installForProcess()} */
    public static boolean requested()
    {
        return requested;
    }

    /**
     * @param wakeUp called on the signal thread when a signal arrives (unblocks a waiting loop)
     * @return what removes it again
     */
    static Runnable onSignal(final Runnable wakeUp)
    {
        WAKE_UPS.add(wakeUp);
        return () -> WAKE_UPS.remove(wakeUp);
    }

    private static void onSignal()
    {
        requested = true;
        WAKE_UPS.forEach(Runnable::run);
    }
}
