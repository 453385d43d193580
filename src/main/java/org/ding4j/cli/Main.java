package org.ding4j.cli;

import org.ding4j.learner.StopSignals;
import org.ding4j.torch.Natives;

/**
 * The {@code ding4j} command line, run by the repository's {@code ./ding4j} launcher. Exit codes: 0 success,
 * 1 failure, 2 bad arguments or configuration (the message names the key or option).
 */
public final class Main
{
    /** Exit code for bad arguments or a bad configuration. */
    static final int BAD_INPUT = 2;
    /** When {@code train}'s first line was printed ({@link System#nanoTime()}), for its start-up report; 0 if not. */
    static volatile long firstLineNanos;

    private Main()
    {
    }

    /**
     * Runs the command line and exits with its code.
     *
     * @param args the arguments
     */
    public static void main(final String[] args)
    {
        // train, eval and info need libtorch: its loading (0.3-0.4 s) starts before the arguments are parsed.
        if (args.length > 0 && ("train".equals(args[0]) || "eval".equals(args[0]) || "info".equals(args[0])))
        {
            Natives.loadInBackground(() -> {
                skipCudaProbesOnCpuBuild();
                // A rank of `ding4j launch`: its launcher loaded the libraries into this cache before starting it.
                final String launcherCache = System.getenv(LauncherWatch.NATIVES_CACHE_VARIABLE);
                if (null != launcherCache && LauncherWatch.startedByLiveLauncher(System.getenv()))
                {
                    Natives.cacheLoadedBy(launcherCache);
                }
            });
        }
        if (args.length > 0 && "train".equals(args[0]))
        {
            // Before the launcher watch, whose stop is a SIGTERM to this process: it must find the handlers.
            StopSignals.installForProcess();
        }
        // A rank of `ding4j launch` stops itself when its launcher is gone (killed with SIGKILL), whatever it runs:
        // the application's decision, so it is made here and not in the library.
        try
        {
            LauncherWatch.start(System.getenv());
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println("ding4j: " + ex.getMessage());
            System.exit(BAD_INPUT);
        }
        final Cli cli = commandLine();
        cli.beforeAction(path -> {
            if ("ding4j train".equals(path))
            {
                // Printed once the arguments parsed (a millisecond; a bad one is all such a run prints), and not only
                // because it says the run has begun: the first write to stdout links its native method, and a link
                // made while libtorch's constructors run (soon, on the load thread) waits for them (the dynamic
                // loader's lock), and the config check after it with it.
                System.out.println("ding4j train: starting");
                System.out.flush();
                firstLineNanos = System.nanoTime();
            }
        });
        final int code = cli.execute(args);
        // --help or a bad argument ends before the load does: the process must not exit during libtorch's constructors.
        Natives.awaitBackgroundLoad();
        // Everything is closed by now; libtorch's static destructors would add ~75 ms to the exit.
        Natives.skipNativeDestructorsAtExit();
        System.exit(code);
    }

    /**
     * A CPU build has no use for JavaCPP's CUDA probes (0.1-0.15 s of every start): an empty platform extension, a
     * JVM-wide property, so the application sets it and not the library; a value the user gave stays.
     */
    static void skipCudaProbesOnCpuBuild()
    {
        if (null == System.getProperty(Natives.EXTENSION_PROPERTY) && Natives.cpuPresets())
        {
            System.setProperty(Natives.EXTENSION_PROPERTY, "");
        }
    }

    /** @return the command line, for tests that run it without exiting */
    static Cli commandLine()
    {
        return new Cli(new Cli.Command("ding4j", "DI-engine's learner in Java on libtorch.")
            .subcommand(TrainCommand.command())
            .subcommand(EvalCommand.command())
            .subcommand(CheckpointCommand.command())
            .subcommand(LaunchCommand.command())
            .subcommand(InfoCommand.command()));
    }
}
