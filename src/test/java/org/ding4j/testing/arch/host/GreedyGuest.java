package org.ding4j.testing.arch.host;

/**
 * ArchitectureTest's fixture: library code that takes what belongs to the host process (a JVM-wide property, a
 * shutdown hook, a signal handler, the JVM's exit). Compiled, never run.
 */
public final class GreedyGuest
{
    private GreedyGuest()
    {
    }

    static void takeEverything()
    {
        System.setProperty("x", "y");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { }));
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), signal -> { });
        Runtime.getRuntime().halt(1);
        System.exit(1);
    }
}
