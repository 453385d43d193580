package org.ding4j.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child JVM of a multi-process test (one rank of a job), started like surefire's own JVM, with its output read on
 * a thread of its own so that the test can wait for a line with a latch instead of sleeping.
 */
public final class ChildJvm
{
    /** Its index (the rank). */
    public final int index;
    /** The process. */
    public final Process process;
    /** Counted down at the first line that matches the predicate given at start. */
    public final CountDownLatch reached = new CountDownLatch(1);
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    private ChildJvm(final int index, final Process process, final Predicate<String> milestone)
    {
        this.index = index;
        this.process = process;
        reader = new Thread(() -> read(milestone), "child-" + index + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * @param crashDir  where the child writes a crash dump ({@code hs_err_pid*.log}, {@code replay_pid*.log}) if it
     *                  dies in native code: the test's temporary folder, never the working tree
     * @param mainClass the class to run
     * @return {@code java} with this JVM's class path and the flags the library needs, then the main class
     */
    public static List<String> javaCommand(final Path crashDir, final String mainClass)
    {
        return new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0",
            "-XX:ErrorFile=" + crashDir.resolve("hs_err_pid%p.log"),
            "-XX:ReplayDataFile=" + crashDir.resolve("replay_pid%p.log"),
            "-cp", System.getProperty("java.class.path"), mainClass));
    }

    /**
     * A port for a TCPStore the child ranks will host, seconds later. It is drawn below the kernel's ephemeral range
     * (ip_local_port_range), from which the OS hands out ports for outgoing connections: a port from inside it,
     * free a moment ago, can be taken by any connection before the child binds it.
     *
     * @return a port that was free a moment ago, outside the ephemeral range
     * @throws IOException if no such port can be bound
     */
    public static int freePort() throws IOException
    {
        final String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim()
            .split("\\s+");
        final int below = Math.max(20_000, Integer.parseInt(range[0]));
        final int from = 10_000;
        for (int tries = 0; tries < 100; tries++)
        {
            final int port = from + ThreadLocalRandom.current().nextInt(below - from);
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress()))
            {
                return socket.getLocalPort();
            }
            catch (final IOException taken)
            {
                // Taken: draw another.
            }
        }
        throw new IOException("no free port found in " + from + "-" + (below - 1) + " after 100 tries");
    }

    /**
     * @param index     its index
     * @param builder   the command (stderr is merged into stdout)
     * @param milestone the line that counts {@link #reached} down
     * @return the started child
     * @throws IOException if it cannot start
     */
    public static ChildJvm start(final int index, final ProcessBuilder builder, final Predicate<String> milestone)
        throws IOException
    {
        return new ChildJvm(index, builder.redirectErrorStream(true).start(), milestone);
    }

    private void read(final Predicate<String> milestone)
    {
        try (BufferedReader in = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            for (String line = in.readLine(); null != line; line = in.readLine())
            {
                lines.add(line);
                if (milestone.test(line))
                {
                    reached.countDown();
                }
            }
        }
        catch (final IOException ignored)
        {
            // The process was killed; what was read stays in lines.
        }
    }

    /**
     * @param seconds how long to wait
     * @return its exit code, once its output is read to the end
     * @throws InterruptedException if interrupted
     * @throws AssertionError       (killing it) if it is still running then
     */
    public int await(final long seconds) throws InterruptedException
    {
        if (!process.waitFor(seconds, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError("child " + index + " still running after " + seconds + " s:\n" + output());
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        return process.exitValue();
    }

    /**
     * @param which a predicate
     * @return the first line so far that matches it
     * @throws AssertionError (with the whole output) if none does
     */
    public String firstLine(final Predicate<String> which)
    {
        synchronized (lines)
        {
            for (final String line : lines)
            {
                if (which.test(line))
                {
                    return line;
                }
            }
        }
        throw new AssertionError("child " + index + " printed no such line:\n" + output());
    }

    /** @return whether it printed exactly this line */
    public boolean printed(final String line)
    {
        return lines.contains(line);
    }

    /** @return everything it printed so far */
    public String output()
    {
        synchronized (lines)
        {
            return String.join("\n", lines);
        }
    }
}
