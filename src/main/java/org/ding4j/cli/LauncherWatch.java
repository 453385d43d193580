package org.ding4j.cli;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import sun.misc.Signal;

/**
 * Ends a rank whose launcher is gone: {@code ding4j launch} forwards its own SIGINT/SIGTERM to its ranks, but a
 * launcher killed with SIGKILL cannot, and its ranks would train on for minutes, holding the port and writing
 * checkpoints. A rank started by the launcher ({@value #VARIABLE} in its environment) watches the launcher's process
 * and, when it exits, stops itself as SIGTERM would (the update in flight finishes, rank 0 saves
 * {@code ckpt_interrupt}); if it is not gone {@value #GRACE_SECONDS} s later, it halts.
 */
final class LauncherWatch
{
    /** The launcher's process id, set by {@code ding4j launch} in each rank's environment. */
    static final String VARIABLE = "DING4J_LAUNCHER_PID";
    /**
     * The JavaCPP cache folder the launcher loaded the libraries into, for its ranks (here, not in the launch command:
     * every rank reads it on its native-load thread, before the load, which must not wait for that command's class).
     */
    static final String NATIVES_CACHE_VARIABLE = "DING4J_LAUNCHER_NATIVES_CACHE";
    static final long GRACE_SECONDS = 30;
    private static final AtomicBoolean STARTED = new AtomicBoolean();

    private LauncherWatch()
    {
    }

    /** @param environment the process environment; without {@value #VARIABLE} (not launched by ding4j) none is watched */
    static void start(final Map<String, String> environment)
    {
        final String pid = environment.get(VARIABLE);
        if (null == pid || pid.isBlank() || !STARTED.compareAndSet(false, true))
        {
            return;
        }
        final Optional<ProcessHandle> launcher;
        try
        {
            launcher = ProcessHandle.of(Long.parseLong(pid.trim()));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(VARIABLE + ": expected a process id, got \"" + pid + "\"", ex);
        }
        if (launcher.isEmpty())
        {
            stop(pid);
            return;
        }
        launcher.get().onExit().thenRun(() -> stop(pid));
    }

    /**
     * @param environment the process environment
     * @return whether this process is a rank its launcher started and that launcher still runs: its parent is the
     *     process {@value #VARIABLE} names (a variable inherited by some other process is not taken for it)
     */
    static boolean startedByLiveLauncher(final Map<String, String> environment)
    {
        final String pid = environment.get(VARIABLE);
        try
        {
            return null != pid && ProcessHandle.current().parent()
                .filter(parent -> parent.pid() == Long.parseLong(pid.trim()) && parent.isAlive()).isPresent();
        }
        catch (final NumberFormatException ex)
        {
            return false;
        }
    }

    private static void stop(final String pid)
    {
        System.err.println("ding4j: the launcher (pid " + pid + ") is gone; stopping this rank");
        final Thread halt = new Thread(() -> {
            try
            {
                // A grace period, not a synchronisation: after it the rank is stopped whatever it is doing.
                TimeUnit.SECONDS.sleep(GRACE_SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(143);
        }, "ding4j-launcher-gone");
        halt.setDaemon(true);
        halt.start();
        Signal.raise(new Signal("TERM"));
    }
}
