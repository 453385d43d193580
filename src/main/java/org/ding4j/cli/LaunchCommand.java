package org.ding4j.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.ding4j.checkpoint.FolderLock;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.rl.pipeline.Restarts;
import org.ding4j.torch.Natives;

/**
 * {@code ding4j launch}: torchrun for ding4j. Starts {@code --nproc} JVMs on this node, each running the ding4j
 * command after {@code --} with torchrun's environment ({@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 * {@code MASTER_ADDR}, {@code MASTER_PORT}), prefixes every line they print with {@code [rank N]}, and when one
 * exits with a failure stops the others (SIGTERM, then SIGKILL after a grace period) and exits with that code. On
 * several nodes run the same command on each with {@code --nnodes}, {@code --node-rank} and the
 * {@code --master-addr} of node 0.
 * <p>
 * With {@code --max-restarts N} a failed attempt is followed by another, up to N times, as torchrun's elastic agent
 * does: every rank starts again with {@code TORCHELASTIC_RESTART_COUNT} set, resumes from the newest verified
 * checkpoint ({@link ElasticAttempt}), and gets the failed attempts' records (cause, update reached, times) for rank
 * 0's {@code summary.json}. A rank's failure message comes from its {@code TORCHELASTIC_ERROR_FILE}. Bad input (exit
 * 2) and a stopped launcher are never restarted.
 */
final class LaunchCommand
{
    /** How long stopped ranks get to save and exit after SIGTERM before they are killed. */
    private static final long GRACE_SECONDS = 30;

    /** The {@code filename=} of a {@code -XX:StartFlightRecording} option (up to the next comma). */
    private static final java.util.regex.Pattern JFR_FILENAME = java.util.regex.Pattern.compile(
        "((?:^|[:=,])filename=)([^,]+)");

    /** What one rank takes at least: a JVM with libtorch, OpenBLAS and a small net loaded (~250 MiB measured). */
    private static final long RANK_BYTES = 256L << 20;
    /** The ranks' default main class: the ding4j command line, which needs a COMMAND. */
    private static final String CLI_MAIN = "org.ding4j.cli.Main";

    private final int nproc;
    private final int nnodes;
    private final int nodeRank;
    private final String masterAddr;
    private Integer masterPort;
    private String jobId;
    private final int maxRestarts;
    private final String mainClass;
    private final List<String> command;
    private final PrintWriter out;
    private final PrintWriter err;

    /** A rank's exit, as the waiting thread reports it. */
    private record Exit(int rank, int code)
    {
    }

    /**
     * How one attempt ended.
     *
     * @param code       0, or the first failing rank's exit code
     * @param record     what {@code summary.json} and the next attempt get of a failed one, else null
     * @param rankZeroOk whether rank 0 (on this node) exited with 0
     */
    private record Outcome(int code, Map<String, Object> record, boolean rankZeroOk)
    {
    }

    /** Set when the launcher itself is told to stop: then no attempt is restarted. */
    private volatile boolean stopping;
    /** Where rank 0 names the job's folder ({@link ElasticAttempt#recordFolder}). */
    private Path folderFile;
    /**
     * The job's folder, held from rank 0's end to the job's when the job may be restarted; else null. Taken on rank
     * 0's output thread the moment its process ends, read by the thread that starts the next attempt.
     */
    private volatile FolderLock heldFolder;
    /** What kept this launcher from holding the job's folder (another job took it first), else null. */
    private volatile String folderLost;

    private LaunchCommand(final Cli.Args args)
    {
        nproc = args.integer("--nproc");
        nnodes = args.integer("--nnodes");
        nodeRank = args.integer("--node-rank");
        masterAddr = args.value("--master-addr");
        masterPort = args.integer("--master-port");
        jobId = args.value("--job-id");
        maxRestarts = args.integer("--max-restarts");
        mainClass = args.value("--main");
        command = args.positionals();
        out = args.out();
        err = args.err();
    }

    /** @return the {@code launch} command's declaration */
    static Cli.Command command()
    {
        return new Cli.Command("launch", "Run a ding4j command on N local ranks (torchrun's environment), e.g. "
            + "ding4j launch --nproc 2 -- train --set exp_name=ddp")
            .requiredOption("--nproc", "N", "ranks on this node (>= 1)")
            .option("--nnodes", "N", "nodes in the job", "1")
            .option("--node-rank", "N", "this node's index", "0")
            .option("--master-addr", "HOST", "host of rank 0's store", DistInfo.DEFAULT_MASTER_ADDR)
            .option("--master-port", "PORT", "its port (default: a free port, on one node; required on several)")
            .option("--job-id", "ID", "the job's identity, checked by every rank at the rendezvous so that a rank of "
                + "another job is refused (default: a new random id; several nodes pass the same one)")
            .option("--max-restarts", "N", "when a rank fails, restart every rank of this node up to N times, each "
                + "attempt resuming from the newest verified checkpoint its job wrote (0: the job fails)", "0")
            .option("--main", "CLASS", "the class whose main each rank runs, on this JVM's class path (the ding4j "
                + "command line's: COMMAND is a ding4j command)", CLI_MAIN)
            .optionalParameters("COMMAND", "the ding4j command each rank runs, after -- (with --main: that class's "
                + "arguments, if any)")
            .printsProgress()
            .action(args -> new LaunchCommand(args).call());
    }

    private int call() throws Exception
    {
        if (command.isEmpty() && CLI_MAIN.equals(mainClass))
        {
            throw new Cli.UsageException("missing COMMAND");
        }
        if (nproc < 1 || nnodes < 1 || nodeRank < 0 || nodeRank >= nnodes)
        {
            throw new IllegalArgumentException("--nproc, --nnodes, --node-rank: expected nproc >= 1, nnodes >= 1, "
                + "0 <= node-rank < nnodes; got nproc=" + nproc + " nnodes=" + nnodes + " node-rank=" + nodeRank);
        }
        final long physical = ((com.sun.management.OperatingSystemMXBean)java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getTotalMemorySize();
        final long maxRanks = Math.max(1, physical / RANK_BYTES);
        if (nproc > maxRanks)
        {
            // Each rank is a JVM with libtorch loaded: 1,000 of them exhausted the machine and the launcher itself.
            throw new IllegalArgumentException("--nproc: expected at most " + maxRanks + " ranks on this node ("
                + (RANK_BYTES >> 20) + " MiB each, " + (physical >> 20) + " MiB of memory), got " + nproc);
        }
        if (maxRestarts < 0)
        {
            throw new IllegalArgumentException("--max-restarts: expected an integer >= 0, got " + maxRestarts);
        }
        final int world = nproc * nnodes;
        final boolean portGiven = null != masterPort;
        if (!portGiven)
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
        if (portGiven && 0 == nodeRank)
        {
            requireFreePort(masterPort);
        }
        // Before any rank starts, and needed: the ranks load from the cache this fills without Natives' lock
        // (LauncherWatch.NATIVES_CACHE_VARIABLE), so none can find a library half written.
        Natives.load();
        final List<Process> processes = new ArrayList<>();
        final List<Thread> pumps = new ArrayList<>();
        final Path errorFiles = Files.createTempDirectory("ding4j-launch-");
        folderFile = errorFiles.resolve("folder");
        // Ctrl-C or SIGTERM to the launcher stops the ranks too, with the same grace, and restarts nothing; the JVM
        // then exits with the signal's code (143 for SIGTERM), the error files' folder removed.
        final Thread onExit = new Thread(() -> {
            stopping = true;
            try
            {
                stopAll(processes);
                // The ranks' last lines (what stopped them) are still in the pipes: the JVM halts after this hook,
                // and would cut the daemon pumps off before they print them.
                awaitPumps(pumps);
                deleteTree(errorFiles);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            catch (final IOException ex)
            {
                // A folder in the temporary folder the system cleans: nothing of the job's is lost.
            }
        }, "ding4j-launch-shutdown");
        Runtime.getRuntime().addShutdownHook(onExit);
        try
        {
            final List<Map<String, Object>> failed = new ArrayList<>();
            for (int attempt = 0; ; attempt++)
            {
                final Outcome outcome = attempt(attempt, world, failed, processes, pumps, errorFiles);
                if (0 == outcome.code())
                {
                    return 0;
                }
                final String cause = (String)outcome.record().get("cause");
                // Rank 0 of ding4j's `train` ended its run (exit 0: solved or at its limit), the job's updates all
                // done (the ranks update in lockstep): a restart would redo none and write its summary over rank 0's.
                final boolean completed = outcome.rankZeroOk() && CLI_MAIN.equals(mainClass)
                    && "train".equals(command.get(0));
                if (stopping || attempt >= maxRestarts || Main.BAD_INPUT == outcome.code() || null != folderLost
                    || completed)
                {
                    if (maxRestarts > 0)
                    {
                        err.println("ding4j launch: not restarting (" + (stopping ? "the launcher was stopped"
                            : null != folderLost ? folderLost
                            : completed ? "rank 0 had completed the job"
                            : Main.BAD_INPUT == outcome.code() ? "bad input: a restart would fail the same way"
                            : maxRestarts + " restarts used") + "); attempt " + attempt + " ended: " + cause);
                        if (!stopping && !completed)
                        {
                            failed.add(outcome.record());
                            recordLastFailure(failed);
                        }
                    }
                    return outcome.code();
                }
                failed.add(outcome.record());
                err.println("ding4j launch: restart " + (attempt + 1) + " of at most " + maxRestarts + ", every rank "
                    + "from the newest verified checkpoint; attempt " + attempt + " ended: " + cause);
                err.flush();
            }
        }
        finally
        {
            try
            {
                stopAll(processes);
                try
                {
                    Runtime.getRuntime().removeShutdownHook(onExit);
                }
                catch (final IllegalStateException ex)
                {
                    // Ctrl-C or SIGTERM to the launcher: the JVM is shutting down and the hook has stopped the ranks.
                }
                out.flush();
                deleteTree(errorFiles);
            }
            finally
            {
                releaseFolder();
            }
        }
    }

    /**
     * Takes the job's folder's lock the moment rank 0's process has ended (and released it), for a restart's rank 0
     * to write under: between an attempt and its restart another job could take the folder and write its
     * checkpoints among this job's. One that took it in that moment ends the job (a restart would be refused).
     */
    private synchronized void holdFolder()
    {
        if (null != heldFolder || null != folderLost)
        {
            return;
        }
        Path folder = null;
        try
        {
            folder = ElasticAttempt.readFolder(folderFile);
            if (null != folder)
            {
                heldFolder = FolderLock.acquire(folder);
            }
        }
        catch (final IllegalStateException ex)
        {
            folderLost = "the job's folder " + folder + " was taken by another job when rank 0 ended: "
                + ex.getMessage();
        }
        catch (final IOException ex)
        {
            err.println("ding4j launch: cannot hold the job's folder " + folder + " for a restart: " + ex.getMessage());
            err.flush();
        }
    }

    private synchronized void releaseFolder()
    {
        if (null != heldFolder)
        {
            try
            {
                heldFolder.close();
            }
            catch (final IOException ex)
            {
                // The lock goes with this process in a moment anyway.
            }
            heldFolder = null;
        }
    }

    /**
     * Adds the last failed attempt to the job's {@code summary.json} ({@link Restarts#recordLastFailure}), only in a
     * folder this launcher holds and marked as this job's: no other job's summary is touched. A failure to write it
     * is said; the job's exit code stays the attempt's.
     */
    private synchronized void recordLastFailure(final List<Map<String, Object>> failed)
    {
        if (null == heldFolder)
        {
            return;
        }
        try
        {
            Restarts.recordLastFailure(heldFolder.folder(), jobId, failed);
        }
        catch (final IOException ex)
        {
            err.println("ding4j launch: cannot add the last attempt to the job's summary.json: " + ex.getMessage());
            err.flush();
        }
    }

    /**
     * Runs every rank of this node once: when one fails, stops the others and records the attempt (the failed rank,
     * its exit, the cause from its error file, the highest update any rank reported, how long it ran and stopped).
     */
    private Outcome attempt(final int attempt, final int world, final List<Map<String, Object>> failed,
        final List<Process> processes, final List<Thread> pumps, final Path errorFiles)
        throws IOException, InterruptedException
    {
        final BlockingQueue<Exit> exits = new ArrayBlockingQueue<>(nproc);
        // A mapper of its own: a static one would be built when the command line declares its commands, and the
        // process's first ObjectMapper costs 0.1-0.2 s of a `train`'s start.
        final String attemptsJson = new ObjectMapper().writeValueAsString(failed);
        final long began = System.nanoTime();
        synchronized (processes)
        {
            processes.clear();
        }
        synchronized (pumps)
        {
            pumps.clear();
        }
        Exit first = null;
        boolean rankZeroDone = false;
        long failedAt = 0;
        List<Integer> stopped = List.of();
        try
        {
            for (int local = 0; local < nproc; local++)
            {
                final int rank = nodeRank * nproc + local;
                final Process process = start(rank, local, world, attempt, attemptsJson,
                    errorFile(errorFiles, attempt, rank));
                synchronized (processes)
                {
                    processes.add(process);
                }
                if (stopping)
                {
                    // The launcher was stopped while this rank started: the shutdown hook's list may have missed it.
                    process.toHandle().destroy();
                }
                err.println("ding4j launch: attempt " + attempt + ": rank " + rank + " is pid " + process.pid());
                err.flush();
                // Rank 0's folder is held the moment its process ends, not when this thread next looks: it may
                // be waiting out another rank's grace (30 s) in stopAll meanwhile.
                final Thread pump = pump(process, rank, out, exits,
                    0 == rank && maxRestarts > 0 ? this::holdFolder : () -> { });
                synchronized (pumps)
                {
                    pumps.add(pump);
                }
            }
            for (int done = 0; done < nproc; done++)
            {
                final Exit exit = exits.take();
                // Before any failure only: a rank 0 the launcher stopped (SIGTERM) exits 0 too.
                rankZeroDone |= null == first && 0 == exit.rank() && 0 == exit.code();
                if (0 != exit.code() && null == first)
                {
                    first = exit;
                    failedAt = System.nanoTime();
                    // Before stopAll's SIGCONT: a rank stopped by a signal says nothing, and its peer, timed out
                    // waiting for it, is the one that fails.
                    stopped = stoppedRanks(processes);
                    if (!stopping)
                    {
                        // (A launcher that is stopping stopped the rank itself: no news.)
                        err.println("ding4j launch: rank " + exit.rank() + " exited with " + exit.code()
                            + (stopped.isEmpty() ? "" : " (" + stoppedNote(stopped) + ")") + "; stopping the other "
                            + "ranks");
                        err.flush();
                    }
                    stopAll(processes);
                }
            }
        }
        finally
        {
            stopAll(processes);
            awaitPumps(pumps);
        }
        if (null == first)
        {
            return new Outcome(0, null, true);
        }
        ElasticAttempt.Failure own = null;
        long reached = -1;
        for (int local = 0; local < nproc; local++)
        {
            final int rank = nodeRank * nproc + local;
            final ElasticAttempt.Failure report = ElasticAttempt.readFailure(errorFile(errorFiles, attempt, rank));
            reached = null == report ? reached : Math.max(reached, report.updates());
            own = rank == first.rank() ? report : own;
        }
        final Map<String, Object> record = new LinkedHashMap<>();
        record.put("attempt", attempt);
        record.put("failed_rank", first.rank());
        record.put("exit_code", first.code());
        record.put("cause", "rank " + first.rank() + " " + describeExit(first.code())
            + (null == own ? "" : ": " + own.message()) + (stopped.isEmpty() ? "" : "; " + stoppedNote(stopped)));
        record.put("stopped_ranks", stopped);
        record.put("update_reached", reached < 0 ? null : reached);
        record.put("ran_s", (failedAt - began) / 1e9);
        record.put("stop_s", (System.nanoTime() - failedAt) / 1e9);
        return new Outcome(first.code(), record, rankZeroDone);
    }

    /** @return what the launcher's line and the attempt's cause say of the ranks a signal had stopped */
    private static String stoppedNote(final List<Integer> stopped)
    {
        return "rank(s) " + stopped + " of this node stopped by a signal (SIGSTOP) at the time";
    }

    /**
     * @param processes this node's ranks, by local index
     * @return the ranks whose process is stopped by a signal now (Linux's {@code /proc/PID/stat} state {@code T});
     *     none where the state cannot be read
     */
    private List<Integer> stoppedRanks(final List<Process> processes)
    {
        final List<Integer> stopped = new ArrayList<>();
        final List<Process> snapshot;
        synchronized (processes)
        {
            snapshot = new ArrayList<>(processes);
        }
        for (int local = 0; local < snapshot.size(); local++)
        {
            try
            {
                final String stat = Files.readString(Path.of("/proc", Long.toString(snapshot.get(local).pid()),
                    "stat"), StandardCharsets.US_ASCII);
                // "PID (COMMAND) STATE ...": the command may hold spaces and parentheses, so after the last ')'.
                if (stat.substring(stat.lastIndexOf(')') + 1).strip().startsWith("T"))
                {
                    stopped.add(nodeRank * nproc + local);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                // Gone meanwhile, or not Linux: not known to be stopped.
            }
        }
        return stopped;
    }

    private static Path errorFile(final Path folder, final int attempt, final int rank)
    {
        return folder.resolve("attempt" + attempt + "-rank" + rank + ".json");
    }

    /** An exit code as the shell reports a process that a signal ended (128 + N). */
    static String describeExit(final int code)
    {
        if (code <= 128 || code > 128 + 64)
        {
            return "exited with " + code;
        }
        final int signal = code - 128;
        final String name = switch (signal)
        {
            case 2 -> " (SIGINT)";
            case 6 -> " (SIGABRT)";
            case 9 -> " (SIGKILL)";
            case 11 -> " (SIGSEGV)";
            case 15 -> " (SIGTERM)";
            default -> "";
        };
        return "was ended by signal " + signal + name + " (exit " + code + ")";
    }

    private static void deleteTree(final Path folder) throws IOException
    {
        try (Stream<Path> files = Files.walk(folder))
        {
            for (final Path file : files.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(file);
            }
        }
        catch (final java.nio.file.NoSuchFileException | java.io.UncheckedIOException ex)
        {
            // Removed meanwhile: a stopped launcher's shutdown hook and its main thread both clean up.
        }
    }

    private Process start(final int rank, final int local, final int world, final int attempt,
        final String attemptsJson, final Path errorFile) throws IOException
    {
        final List<String> args = new ArrayList<>();
        args.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // The ranks run as this JVM does (module exports, heap, system properties, a class-data archive it maps),
        // minus debugger agents, each with a JMX port and a flight recording of its own.
        for (final String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (!jvmArg.startsWith("-agentlib:jdwp") && !jvmArg.startsWith("-javaagent"))
            {
                args.add(rankJvmArg(jvmArg, local));
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
        // Each attempt is its own job at the rendezvous, so a rank left over from an earlier one is refused.
        env.put(DistInfo.JOB_ID_VARIABLE, ElasticAttempt.attemptId(jobId, attempt));
        env.put(ElasticAttempt.RESTART_COUNT_VARIABLE, Integer.toString(attempt));
        env.put(ElasticAttempt.MAX_RESTARTS_VARIABLE, Integer.toString(maxRestarts));
        env.put(ElasticAttempt.ERROR_FILE_VARIABLE, errorFile.toString());
        env.put(ElasticAttempt.ATTEMPTS_VARIABLE, attemptsJson);
        env.put(ElasticAttempt.FOLDER_FILE_VARIABLE, folderFile.toString());
        if (null != heldFolder)
        {
            env.put(ElasticAttempt.FOLDER_HOLDER_VARIABLE, Long.toString(ProcessHandle.current().pid()));
        }
        // The ranks watch this process: if it is killed outright, they stop themselves.
        env.put(LauncherWatch.VARIABLE, Long.toString(ProcessHandle.current().pid()));
        // This launcher loaded the libraries into this cache before it started any rank (Natives.cacheLoadedBy).
        env.put(LauncherWatch.NATIVES_CACHE_VARIABLE, Natives.cacheFolder().toString());
        return builder.start();
    }

    /**
     * A JVM option of the launcher as rank {@code local} takes it: a JMX port (and RMI port) {@code P} becomes
     * {@code P + 1 + local}, since every rank inheriting the launcher's port died with "Port already in use"; a
     * flight recording's {@code filename=F.jfr} becomes {@code F-rank<local>.jfr}, since the launcher and every rank
     * wrote one file. Anything else is passed as it is.
     *
     * @param arg   the launcher's option
     * @param local the rank's local index
     * @return the rank's option
     */
    static String rankJvmArg(final String arg, final int local)
    {
        for (final String port : new String[] {"-Dcom.sun.management.jmxremote.port=",
            "-Dcom.sun.management.jmxremote.rmi.port="})
        {
            if (arg.startsWith(port))
            {
                try
                {
                    return port + (Integer.parseInt(arg.substring(port.length()).trim()) + 1 + local);
                }
                catch (final NumberFormatException ex)
                {
                    return arg;
                }
            }
        }
        if (arg.startsWith("-XX:StartFlightRecording"))
        {
            return JFR_FILENAME.matcher(arg).replaceAll(m -> java.util.regex.Matcher.quoteReplacement(m.group(1)
                + (m.group(2).endsWith(".jfr") ? m.group(2).substring(0, m.group(2).length() - 4) + "-rank" + local
                + ".jfr" : m.group(2) + "-rank" + local)));
        }
        return arg;
    }

    /** A port nobody listens on now; rank 0 binds it a moment later (a race another job could win is caught there). */
    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /**
     * Refuses a master port that another process listens on here, on node 0, where rank 0's store will listen on it:
     * rank 0 then failed to bind, and the other ranks stayed in libtorch's connect to the stranger (deaf to SIGTERM)
     * until the launcher killed them after its grace.
     */
    private static void requireFreePort(final int port) throws IOException
    {
        try (ServerSocket socket = new ServerSocket())
        {
            // As libtorch's store binds it: every address, SO_REUSEADDR (a port in TIME_WAIT is free to it).
            socket.setReuseAddress(true);
            socket.bind(new java.net.InetSocketAddress(port));
        }
        catch (final java.net.BindException ex)
        {
            throw new IllegalArgumentException("--master-port: expected a port free on this node (rank 0's store "
                + "listens on it), got " + port + ", which cannot be listened on here (" + ex.getMessage() + "); "
                + "choose another, or leave --master-port out on one node (a free one is picked)", ex);
        }
    }

    /** Copies a rank's output line by line with its prefix, then reports its exit code. */
    private static Thread pump(final Process process, final int rank, final PrintWriter out,
        final BlockingQueue<Exit> exits, final Runnable ended)
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
            ended.run();
            exits.add(new Exit(rank, code));
        }, "ding4j-launch-rank-" + rank);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /**
     * SIGTERM to every rank still running (so rank 0 can save), then SIGCONT (a rank stopped with SIGSTOP, the hung
     * rank its peers timed out on, would otherwise hold the SIGTERM pending through the whole grace), SIGKILL to
     * those still there after the grace.
     */
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
                resume(process);
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

    /** Waits (a grace in all) for the ranks' output to be copied to the end. */
    private static void awaitPumps(final List<Thread> pumps) throws InterruptedException
    {
        final List<Thread> snapshot;
        synchronized (pumps)
        {
            snapshot = new ArrayList<>(pumps);
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GRACE_SECONDS);
        for (final Thread pump : snapshot)
        {
            pump.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
    }

    /** SIGCONT through kill(1): Java sends only SIGTERM and SIGKILL itself. */
    private static void resume(final Process process) throws InterruptedException
    {
        try
        {
            new ProcessBuilder("kill", "-CONT", Long.toString(process.pid())).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(GRACE_SECONDS, TimeUnit.SECONDS);
        }
        catch (final IOException ex)
        {
            // No kill(1): a stopped rank then waits for the SIGKILL after the grace; a running one is unaffected.
        }
    }
}
