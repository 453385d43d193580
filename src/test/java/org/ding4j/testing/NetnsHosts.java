package org.ding4j.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * Test hosts on this machine: one Linux network namespace per host, each with its own address on one subnet, joined
 * by links with a fixed delay per direction (and optional loss). Ranks started in different namespaces talk over
 * those addresses with real TCP, never over loopback.
 * <p>
 * The links are TAP devices served by {@code src/test/native/delay_hub.c}, compiled here with {@code cc}: this
 * machine's kernel has no {@code sch_netem} (nor {@code fq} or tc classifiers), so {@code tc netem} cannot delay a
 * veth; the hub forwards each frame to the other hosts after the delay, which is what netem on each end of a link
 * does. Each host runs with {@code net.ipv4.tcp_slow_start_after_idle=0}, as cluster hosts for collectives
 * do; the links carry segment offloads (TSO), so the hub moves 64 KB segments, not 1500-byte frames. Where
 * namespaces cannot be made (not root, no {@code ip}, no {@code /dev/net/tun}, no C compiler) the calling
 * test is skipped with that reason ({@link Assumptions#abort}), never passed.
 */
public final class NetnsHosts implements AutoCloseable
{

    private final String prefix;
    private final int count;
    private final int subnet;
    private final Process hub;
    private final List<String> created = new ArrayList<>();

    private NetnsHosts(final int count, final Process hub, final String prefix, final int subnet)
    {
        this.count = count;
        this.hub = hub;
        this.prefix = prefix;
        this.subnet = subnet;
    }

    /**
     * @param count   hosts, 2 to 16
     * @param delayUs one-way delay of every link, microseconds
     * @param lossPpm frames dropped per million
     * @param workDir where the hub is compiled
     * @return the hosts, up and reachable
     * @throws IOException if a command fails after the checks passed
     */
    public static NetnsHosts create(final int count, final long delayUs, final long lossPpm, final Path workDir)
        throws IOException, InterruptedException
    {
        final String uid = run(List.of("id", "-u")).trim();
        if (!"0".equals(uid))
        {
            Assumptions.abort("network namespaces need root; this test runs as uid " + uid);
        }
        try
        {
            run(List.of("ip", "-V"));
        }
        catch (final IOException ex)
        {
            Assumptions.abort("no ip command (Debian's iproute2): " + ex.getMessage());
        }
        if (!Files.exists(Path.of("/dev/net/tun")))
        {
            Assumptions.abort("no /dev/net/tun: the delayed links are TAP devices");
        }
        final Path hubBinary = workDir.resolve("delay_hub");
        final ProcessBuilder compile = new ProcessBuilder("cc", "-O2", "-o", hubBinary.toString(),
            Path.of("src/test/native/delay_hub.c").toAbsolutePath().toString());
        if (0 != exitCode(compile))
        {
            Assumptions.abort("cannot compile src/test/native/delay_hub.c with cc");
        }
        final long pid = ProcessHandle.current().pid();
        final String prefix = "d4j" + pid % 100000 + "h";
        final List<String> command = new ArrayList<>(List.of(hubBinary.toString(), Long.toString(delayUs),
            Long.toString(lossPpm)));
        for (int i = 0; i < count; i++)
        {
            command.add(prefix + i);
        }
        final Process hub = new ProcessBuilder(command).redirectErrorStream(true).start();
        final NetnsHosts hosts = new NetnsHosts(count, hub, prefix, (int)(pid % 250) + 1);
        try
        {
            final String first = new BufferedReader(new InputStreamReader(hub.getInputStream(),
                StandardCharsets.UTF_8)).readLine();
            if (!"ready".equals(first))
            {
                throw new IOException("delay_hub did not start: " + first);
            }
            for (int i = 0; i < count; i++)
            {
                hosts.addHost(i);
            }
            return hosts;
        }
        catch (final IOException | RuntimeException e)
        {
            hosts.close();
            throw e;
        }
    }

    private void addHost(final int i) throws IOException, InterruptedException
    {
        final String ns = namespace(i);
        if (0 != exitCode(new ProcessBuilder("ip", "netns", "add", ns)))
        {
            Assumptions.abort("ip netns add " + ns + " failed: network namespaces cannot be made here");
        }
        created.add(ns);
        for (final List<String> step : List.of(
            List.of("ip", "link", "set", iface(i), "netns", ns),
            List.of("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", iface(i)),
            List.of("ip", "-n", ns, "link", "set", iface(i), "up"),
            List.of("ip", "-n", ns, "link", "set", "lo", "up"),
            // Linux restarts slow start on a connection idle for one RTO; a collective every few ms on a 1-5 ms
            // link would then ramp its window up again each time (clusters turn this off for the same reason).
            List.of("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_slow_start_after_idle=0")))
        {
            final String out = run(step);
            if (!out.isBlank())
            {
                throw new IOException(String.join(" ", step) + ": " + out);
            }
        }
    }

    /** @return how many hosts */
    public int count()
    {
        return count;
    }

    /**
     * @param i a host
     * @return its namespace's name
     */
    public String namespace(final int i)
    {
        return prefix + i + "ns";
    }

    /**
     * @param i a host
     * @return its network interface (for {@code GLOO_SOCKET_IFNAME})
     */
    public String iface(final int i)
    {
        return prefix + i;
    }

    /**
     * @param i a host
     * @return its IPv4 address
     */
    public String address(final int i)
    {
        return "10.77." + subnet + "." + (i + 1);
    }

    /**
     * @param i       a host
     * @param command a command
     * @return the command run inside that host's namespace
     */
    public List<String> onHost(final int i, final List<String> command)
    {
        final List<String> wrapped = new ArrayList<>(List.of("ip", "netns", "exec", namespace(i)));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Ends the hub (its links go) and removes the namespaces. */
    @Override
    public void close() throws IOException, InterruptedException
    {
        try (OutputStream stdin = hub.getOutputStream())
        {
            stdin.flush();
        }
        if (!hub.waitFor(10, TimeUnit.SECONDS))
        {
            hub.destroyForcibly();
        }
        for (final String ns : created)
        {
            run(List.of("ip", "netns", "del", ns));
        }
    }

    private static int exitCode(final ProcessBuilder builder) throws IOException, InterruptedException
    {
        final Process process = builder.redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        return process.waitFor();
    }

    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return out;
    }
}
