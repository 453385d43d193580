package org.ding4j.dist;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.ding4j.testing.ChildJvm;
import org.ding4j.testing.NetnsHosts;

/**
 * The scaling table of benchmarks/README.md: per-update time of a fused MLP step ({@link ScalingChild}) on 1 rank,
 * and on 2 ranks in 2 network namespaces ({@link NetnsHosts}) at each link delay, with the flat all-reduce and the
 * bucketed, overlapped one run alternately (flat, buckets, flat, buckets), each cell the median of its two runs'
 * medians. With {@code --autograd} the step is libtorch autograd instead, and the two alternating columns are the
 * bucketed all-reduce after backward ({@link GradientSync}) and c10d's Reducer during backward ({@link DataParallel}).
 * Run by {@code benchmarks/scaling.sh}; needs root (namespaces).
 * <p>
 * Arguments: name=widths:batch:updates ... [--delays-us 0,300,1000,5000] [--bucket-mb 1] [--autograd]; the system
 * property
 * {@value DistGroup#EXCHANGE_MAX_BYTES_PROPERTY} and {@value DistGroup#POST_AHEAD_PROPERTY} are passed on to the ranks.
 */
public final class ScalingBench
{
    private ScalingBench()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        long[] delays = {0, 300, 1000, 5000};
        double bucketMb = GradientSync.DEFAULT_BUCKET_MB;
        boolean autograd = false;
        final List<String[]> nets = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            if ("--delays-us".equals(args[i]))
            {
                delays = java.util.Arrays.stream(args[++i].split(",")).mapToLong(Long::parseLong).toArray();
            }
            else if ("--autograd".equals(args[i]))
            {
                autograd = true;
            }
            else if ("--bucket-mb".equals(args[i]))
            {
                bucketMb = Double.parseDouble(args[++i]);
            }
            else
            {
                final String[] nameRest = args[i].split("=", 2);
                final String[] parts = nameRest[1].split(":");
                nets.add(new String[] {nameRest[0], parts[0], parts[1], parts[2]});
            }
        }
        final Path dir = Files.createTempDirectory("ding4j-scaling");
        final long bucketBytes = GradientSync.bytesOf(bucketMb);
        // Fused: flat against buckets; autograd: buckets after backward against the Reducer's during it.
        final String[] modes = autograd ? new String[] {"autograd", "reducer"} : new String[] {"fused", "fused"};
        final long[] caps = autograd ? new long[] {bucketBytes, bucketBytes} : new long[] {0, bucketBytes};
        System.out.println(autograd ? "| net (parameters, batch) | 1 rank autograd ms | delay ms | 2 ranks after "
            + "backward ms (x) | 2 ranks Reducer ms (x) | buckets |" : "| net (parameters, batch) | 1 rank ms | delay ms "
            + "| 2 ranks flat ms (x) | 2 ranks buckets ms (x) | buckets |");
        System.out.println("|---|---|---|---|---|---|");
        for (final String[] net : nets)
        {
            final String[] single = run(null, net, 0, 1, modes[0]);
            final double one = Double.parseDouble(single[0]) / 1e3;
            for (final long delay : delays)
            {
                final double[] flat = new double[2];
                final double[] bucketed = new double[2];
                String buckets = "";
                try (NetnsHosts hosts = NetnsHosts.create(2, delay, 0, dir))
                {
                    for (int k = 0; k < 2; k++)
                    {
                        flat[k] = Double.parseDouble(run(hosts, net, caps[0], 2, modes[0])[0]) / 1e3;
                        final String[] b = run(hosts, net, caps[1], 2, modes[1]);
                        bucketed[k] = Double.parseDouble(b[0]) / 1e3;
                        buckets = b[1];
                    }
                }
                final double f = (flat[0] + flat[1]) / 2;
                final double b = (bucketed[0] + bucketed[1]) / 2;
                System.out.printf(Locale.ROOT, "| %s (%s, %s) | %.2f | %.1f | %.2f (%.2fx) | %.2f (%.2fx) | %s |%n",
                    net[0], single[2], net[2], one, delay / 1e3, f, f / one, b, b / one, buckets);
                System.out.flush();
            }
        }
    }

    /** @return median us, bucket count, parameter count of rank 0 */
    private static String[] run(final NetnsHosts hosts, final String[] net, final long bucketBytes, final int world,
        final String mode) throws Exception
    {
        final Path out = Files.createTempDirectory("ding4j-scaling-run");
        final int port = 29700;
        final List<ChildJvm> ranks = new ArrayList<>();
        for (int r = 0; r < world; r++)
        {
            final List<String> command = ChildJvm.javaCommand(out, ScalingChild.class.getName());
            for (final String property : List.of(DistGroup.EXCHANGE_MAX_BYTES_PROPERTY, DistGroup.POST_AHEAD_PROPERTY))
            {
                final String value = System.getProperty(property);
                if (null != value)
                {
                    command.add(1, "-D" + property + "=" + value);
                }
            }
            command.addAll(List.of(Integer.toString(r), Integer.toString(world), Integer.toString(port),
                null == hosts ? "127.0.0.1" : hosts.address(0), net[1], net[2], Long.toString(bucketBytes),
                "10", net[3], mode));
            final ProcessBuilder builder = new ProcessBuilder(null == hosts ? command : hosts.onHost(r, command));
            if (null != hosts)
            {
                builder.environment().put("GLOO_SOCKET_IFNAME", hosts.iface(r));
            }
            ranks.add(ChildJvm.start(r, builder, line -> false));
        }
        for (final ChildJvm rank : ranks)
        {
            if (0 != rank.await(600))
            {
                throw new IllegalStateException("rank " + rank.index + " failed:\n" + rank.output());
            }
        }
        final ChildJvm zero = ranks.get(0);
        return new String[] {value(zero, "MEDIAN_US "), value(zero, "BUCKETS "), value(zero, "PARAMS ")};
    }

    private static String value(final ChildJvm rank, final String prefix)
    {
        return rank.firstLine(l -> l.startsWith(prefix)).substring(prefix.length());
    }
}
