package org.ding4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.dist.DistException;
import org.ding4j.dist.DistGroup;
import org.ding4j.dist.DistInfo;
import org.ding4j.torch.Threads;

/**
 * A rank for {@link JobIsolationTest}, started by {@code ding4j launch}: joins the group from the environment and
 * all-reduces its job's tag for a while; in a group of its own job every sum is world size x tag, so a sum that is
 * not means ranks of two jobs were paired. Arguments: the tag, then for how many seconds after joining (0: until
 * stopped), so that two jobs started together overlap.
 */
public final class JobProbe
{
    private JobProbe()
    {
    }

    public static void main(final String[] args)
    {
        Threads.configure();
        final double tag = Double.parseDouble(args[0]);
        final long seconds = Long.parseLong(args[1]);
        // An optional file whose appearance ends the job early (the test's signal that it has seen what it needs).
        final Path stop = args.length > 2 ? Path.of(args[2]) : null;
        final DistInfo info = DistInfo.fromEnvironment(System.getenv());
        try (DistGroup group = DistGroup.join(info, Duration.ofSeconds(20)))
        {
            System.out.println("joined " + info.rank() + " pid " + ProcessHandle.current().pid());
            System.out.flush();
            final long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(seconds);
            // The vote keeps both ranks on the same round count whichever clock ends first.
            while (true)
            {
                try (PointerScope scope = new PointerScope())
                {
                    final Tensor more = torch.full(new long[] {1}, new org.bytedeco.pytorch.Scalar(
                        (0 == seconds || System.nanoTime() < end) && (null == stop || !Files.exists(stop))
                            ? 1 : 0));
                    group.allReduceSum(more, "probe vote");
                    if (more.item_double() < info.worldSize())
                    {
                        break;
                    }
                }
                try (PointerScope scope = new PointerScope())
                {
                    final Tensor value = torch.full(new long[] {1}, new org.bytedeco.pytorch.Scalar(tag));
                    group.allReduceSum(value, "probe");
                    final double sum = value.item_double();
                    if (sum != tag * info.worldSize())
                    {
                        System.out.println("MIXED " + sum);
                        System.exit(9);
                    }
                }
            }
            System.out.println("DONE " + info.rank());
        }
        catch (final DistException ex)
        {
            System.out.println("REFUSED " + ex.getMessage());
            System.exit(3);
        }
    }
}
