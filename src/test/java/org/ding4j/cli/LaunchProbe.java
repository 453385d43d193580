package org.ding4j.cli;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A rank for {@link LaunchCommandTest}: prints the torchrun environment it got and its arguments. With
 * {@code fail DIR}, rank 0 prints, then creates {@code DIR/rank0.ready} and blocks until it is stopped; rank 1 waits
 * for that file (so rank 0's line exists before the launcher stops it) and exits 7. With
 * {@code fail-first-attempt CODE}, rank 1 exits with CODE in the first attempt and succeeds in a restarted one.
 */
public final class LaunchProbe
{
    private static final String READY = "rank0.ready";

    private LaunchProbe()
    {
    }

    public static void main(final String[] args) throws InterruptedException, IOException
    {
        final int rank = Integer.parseInt(System.getenv("RANK"));
        System.out.println("rank=" + rank + " world=" + System.getenv("WORLD_SIZE") + " local="
            + System.getenv("LOCAL_RANK") + " master=" + System.getenv("MASTER_ADDR") + ":"
            + System.getenv("MASTER_PORT") + " args=" + String.join(",", args) + " restart="
            + System.getenv("TORCHELASTIC_RESTART_COUNT") + " job=" + System.getenv("DING4J_JOB_ID"));
        System.out.flush();
        if (args.length > 0 && "fail-first-attempt".equals(args[0]) && 1 == rank
            && "0".equals(System.getenv("TORCHELASTIC_RESTART_COUNT")))
        {
            System.exit(Integer.parseInt(args[1]));
        }
        if (args.length > 1 && "fail".equals(args[0]))
        {
            final Path dir = Path.of(args[1]);
            if (1 == rank)
            {
                awaitFile(dir, READY);
                System.exit(7);
            }
            Files.createFile(dir.resolve(READY));
            // Never counted down: only the launcher's stop ends this rank.
            new CountDownLatch(1).await();
        }
    }

    private static void awaitFile(final Path dir, final String name) throws IOException, InterruptedException
    {
        try (WatchService watch = FileSystems.getDefault().newWatchService())
        {
            dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
            // Registered before the check, so a file created in between is still reported.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Files.exists(dir.resolve(name)))
            {
                final WatchKey key = watch.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (null == key)
                {
                    throw new IllegalStateException("rank 0 never created " + dir.resolve(name));
                }
                key.pollEvents();
                key.reset();
            }
        }
    }
}
