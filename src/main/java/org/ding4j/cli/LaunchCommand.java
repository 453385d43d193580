package org.ding4j.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.ding4j.dist.DistInfo;
import org.ding4j.torch.Natives;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ding4j launch}: torchrun for ding4j. Starts {@code --nproc} JVMs on this node, each running the ding4j
 * command after {@code --} with torchrun's environment ({@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 * {@code MASTER_ADDR}, {@code MASTER_PORT}), prefixes every line they print with {@code [rank N]}, and when one
 * exits with a failure stops the others (SIGTERM, then SIGKILL after a grace period) and exits with that code. On
 * several nodes run the same command on each with {@code --nnodes}, {@code --node-rank} and the
 * {@code --master-addr} of node 0.
 */
@Command(name = "launch", mixinStandardHelpOptions = true,
    description = "Run a ding4j command on N local ranks (torchrun's environment), e.g. "
        + "ding4j launch --nproc 2 -- train --set exp_name=ddp")
final class LaunchCommand implements Callable<Integer>
{
    /** How long stopped ranks get to save and exit after SIGTERM before they are killed. */
    private static final long GRACE_SECONDS = 30;

    @Option(names = "--nproc", required = true, description = "ranks on this node (>= 1)")
    private int nproc;

    @Option(names = "--nnodes", defaultValue = "1", description = "nodes in the job (default: ${DEFAULT-VALUE})")
    private int nnodes;

    @Option(names = "--node-rank", defaultValue = "0", description = "this node's index (default: ${DEFAULT-VALUE})")
    private int nodeRank;

    @Option(names = "--master-addr", defaultValue = DistInfo.DEFAULT_MASTER_ADDR,
        description = "host of rank 0's store (default: ${DEFAULT-VALUE})")
    private String masterAddr;

    @Option(names = "--master-port", description = "its port (default: a free port, on one node; required on "
        + "several)")
    private Integer masterPort;

    @Option(names = "--job-id", description = "the job's identity, checked by every rank at the rendezvous so a rank "
        + "of another job is refused (default: a new random id; several nodes pass the same one)")
    private String jobId;

    @Option(names = "--main", defaultValue = "org.ding4j.cli.Main", paramLabel = "CLASS",
        description = "the class whose main each rank runs, on this JVM's class path (default: the ding4j command "
            + "line, so COMMAND is a ding4j command)")
    private String mainClass;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "the ding4j command each rank runs, after --")
    private List<String> command = new ArrayList<>();

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** A rank's exit, as the waiting thread reports it. */
    private record Exit(int rank, int code)
    {
    }

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter err = spec.commandLine().getErr();
        if (nproc < 1 || nnodes < 1 || nodeRank < 0 || nodeRank >= nnodes)
        {
            throw new IllegalArgumentException("--nproc, --nnodes, --node-rank: expected nproc >= 1, nnodes >= 1, "
                + "0 <= node-rank < nnodes; got nproc=" + nproc + " nnodes=" + nnodes + " node-rank=" + nodeRank);
        }
        final int world = nproc * nnodes;
        if (null == masterPort)
        {
            if (nnodes > 1)
            {
                throw new IllegalArgumentException("--master-port: expected a port when --nnodes > 1 (every node must "
                    + "name the same one)");
            }
            masterPort = freePort();
        }
        if (null == jobId)
        {
            if (nnodes > 1)
            {
                throw new IllegalArgumentException("--job-id: expected an id when --nnodes > 1 (every node must name "
                    + "the same one)");
            }
            jobId = UUID.randomUUID().toString();
        }
        // Checks the address, port and id the way every rank will.
        new DistInfo(0, world, 0, masterAddr, masterPort, jobId);
        // The ranks would wait for each other's extraction under Natives' lock; extracting once here first leaves
        // them a complete cache and a quicker start.
        Natives.load();
        final PrintWriter out = spec.commandLine().getOut();
        final List<Process> processes = new ArrayList<>();
        final BlockingQueue<Exit> exits = new ArrayBlockingQueue<>(nproc);
        final List<Thread> pumps = new ArrayList<>();
        // Ctrl-C or SIGTERM to the launcher stops the ranks too, with the same grace.
        final Thread onExit = new Thread(() -> {
            try
            {
                stopAll(processes);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }, "ding4j-launch-shutdown");
        Runtime.getRuntime().addShutdownHook(onExit);
        try
        {
            for (int local = 0; local < nproc; local++)
            {
                final int rank = nodeRank * nproc + local;
                final Process process = start(rank, local, world);
                synchronized (processes)
                {
                    processes.add(process);
                }
                pumps.add(pump(process, rank, out, exits));
            }
            int failure = 0;
            for (int done = 0; done < nproc; done++)
            {
                final Exit exit = exits.take();
                if (0 != exit.code() && 0 == failure)
                {
                    failure = exit.code();
                    err.println("ding4j launch: rank " + exit.rank() + " exited with " + exit.code()
                        + "; stopping the other ranks");
                    err.flush();
                    stopAll(processes);
                }
            }
            return failure;
        }
        finally
        {
            stopAll(processes);
            Runtime.getRuntime().removeShutdownHook(onExit);
            for (final Thread pump : pumps)
            {
                pump.join(TimeUnit.SECONDS.toMillis(GRACE_SECONDS));
            }
            out.flush();
        }
    }

    private Process start(final int rank, final int local, final int world) throws IOException
    {
        final List<String> args = new ArrayList<>();
        args.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // The ranks run as this JVM does (module exports, heap, system properties, a class-data archive it maps),
        // minus debugger agents.
        for (final String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (!jvmArg.startsWith("-agentlib:jdwp") && !jvmArg.startsWith("-javaagent"))
            {
                args.add(jvmArg);
            }
        }
        args.add("-cp");
        args.add(System.getProperty("java.class.path"));
        args.add(mainClass);
        args.addAll(command);
        final ProcessBuilder builder = new ProcessBuilder(args).redirectErrorStream(true);
        final Map<String, String> env = builder.environment();
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(world));
        env.put("LOCAL_RANK", Integer.toString(local));
        env.put("MASTER_ADDR", masterAddr);
        env.put("MASTER_PORT", Integer.toString(masterPort));
        env.put(DistInfo.JOB_ID_VARIABLE, jobId);
        // The ranks watch this process: if it is killed outright, they stop themselves.
        env.put("DING4J_LAUNCHER_PID", Long.toString(ProcessHandle.current().pid()));
        return builder.start();
    }

    /** A port nobody listens on now; rank 0 binds it a moment later (a race another job could win is caught there). */
    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /** Copies a rank's output line by line with its prefix, then reports its exit code. */
    private static Thread pump(final Process process, final int rank, final PrintWriter out,
        final BlockingQueue<Exit> exits)
    {
        final String prefix = "[rank " + rank + "] ";
        final Thread thread = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                for (String line = in.readLine(); null != line; line = in.readLine())
                {
                    synchronized (out)
                    {
                        out.println(prefix + line);
                        out.flush();
                    }
                }
            }
            catch (final IOException ignored)
            {
                // The rank is gone; its exit code says how.
            }
            int code;
            try
            {
                code = process.waitFor();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                code = 1;
            }
            exits.add(new Exit(rank, code));
        }, "ding4j-launch-rank-" + rank);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** SIGTERM to every rank still running (so rank 0 can save), SIGKILL to those still there after the grace. */
    private static void stopAll(final List<Process> processes) throws InterruptedException
    {
        final List<Process> snapshot;
        synchronized (processes)
        {
            snapshot = new ArrayList<>(processes);
        }
        for (final Process process : snapshot)
        {
            if (process.isAlive())
            {
                // ProcessHandle.destroy() sends SIGTERM without closing our end of the rank's output.
                process.toHandle().destroy();
            }
        }
        for (final Process process : snapshot)
        {
            if (!process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS))
            {
                process.toHandle().destroyForcibly();
            }
        }
    }
}
