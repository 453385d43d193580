package org.ding4j.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.JMException;
import javax.management.ObjectName;

import org.ding4j.config.Config;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.torch.NativeMemory;
import org.ding4j.torch.Threads;

/**
 * The memory soak (DESIGN.md target 5), a harness and not a JMH benchmark: the CartPole DQN pipeline trained for a
 * fixed number of updates (never solving: the stop value is out of reach), sampling the process's RSS, glibc's
 * in-use bytes and the JVM heap after every {@code sample} updates. Prints the series and, over the samples after
 * the warm-up fraction, the least-squares slope of each in KiB per 10k updates. Run with
 * {@code -XX:NativeMemoryTracking=summary} to sample the JVM's own committed native memory too (NMT), which tells
 * growth inside the JVM from growth outside it (libtorch, glibc's arenas).
 * <p>
 * Arguments: [updates (default 100000)] [sample every (default 5000)] [experiment folder (default soak_run)]
 */
public final class SoakHarness
{
    private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB");
    private static final Pattern NMT_CATEGORY = Pattern.compile("-\\s+(\\S[^(]*?) \\(reserved=\\d+KB, committed=(\\d+)KB");
    /** NMT's committed KiB per category at the last sample, to name the category that moved. */
    private static final Map<String, Long> LAST_CATEGORIES = new java.util.HashMap<>();

    private SoakHarness()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        Threads.configure(1, 1, 1);
        final long updates = args.length > 0 ? Long.parseLong(args[0]) : 100_000;
        final long every = args.length > 1 ? Long.parseLong(args[1]) : 5_000;
        final String exp = args.length > 2 ? args[2] : "soak_run";
        final List<long[]> samples = new ArrayList<>();
        final long[] next = {0};
        final Config cfg = Config.empty().with("exp_name", exp).with("env.stop_value", 1e9)
            .with("pipeline.max_train_iter", updates).with("pipeline.max_env_step", Long.MAX_VALUE / 2)
            .with("learner.hook.save_ckpt_after_iter", 1_000_000_000L);
        new OffPolicyPipeline(cfg).run(p -> {
            if (p.trainIter() >= next[0])
            {
                final Runtime jvm = Runtime.getRuntime();
                samples.add(new long[] {p.trainIter(), rssKiB(), NativeMemory.mallocInUseBytes() >> 10,
                    (jvm.totalMemory() - jvm.freeMemory()) >> 10, nmtCommittedKiB()});
                System.out.printf(Locale.ROOT, "updates %7d  rss %8d KiB  malloc in use %8d KiB  heap used %8d KiB  "
                    + "JVM committed (NMT) %8d KiB%n", (Object[])box(samples.get(samples.size() - 1)));
                next[0] += every;
            }
        }, Map.of());
        final List<long[]> steady = samples.subList(samples.size() / 5, samples.size());
        System.out.printf(Locale.ROOT, "after %d updates (first fifth skipped as warm-up), KiB per 10k updates: rss "
            + "%.1f, malloc in use %.1f, heap used %.1f, JVM committed %.1f; JVM %s%n", updates, slope(steady, 1),
            slope(steady, 2), slope(steady, 3), slope(steady, 4), ManagementFactory.getRuntimeMXBean().getVmVersion());
    }

    private static Long[] box(final long[] sample)
    {
        final Long[] boxed = new Long[sample.length];
        for (int i = 0; i < sample.length; i++)
        {
            boxed[i] = sample[i];
        }
        return boxed;
    }

    private static double slope(final List<long[]> samples, final int column)
    {
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (final long[] s : samples)
        {
            final double x = s[0] / 1e4;
            sx += x;
            sy += s[column];
            sxx += x * x;
            sxy += x * s[column];
        }
        final int n = samples.size();
        return (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    /** The JVM's committed native memory from NMT's summary, or -1 without {@code -XX:NativeMemoryTracking}. */
    private static long nmtCommittedKiB()
    {
        try
        {
            final Object text = ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
            final Matcher total = NMT_TOTAL.matcher(String.valueOf(text));
            reportMovedCategories(String.valueOf(text));
            return total.find() ? Long.parseLong(total.group(1)) : -1;
        }
        catch (final JMException ex)
        {
            return -1;
        }
    }

    /** Prints each NMT category whose committed memory moved by more than 1 MiB since the last sample. */
    private static void reportMovedCategories(final String summary)
    {
        final Matcher category = NMT_CATEGORY.matcher(summary);
        while (category.find())
        {
            final long now = Long.parseLong(category.group(2));
            final Long before = LAST_CATEGORIES.put(category.group(1).trim(), now);
            if (null != before && Math.abs(now - before) > 1024)
            {
                System.out.printf(Locale.ROOT, "  NMT %s: %+d KiB%n", category.group(1).trim(), now - before);
            }
        }
    }

    private static long rssKiB()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("VmRSS:"))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        }
        catch (final IOException ex)
        {
            return -1;
        }
        return -1;
    }
}
