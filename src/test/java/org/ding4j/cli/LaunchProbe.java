package org.ding4j.cli;

import java.util.concurrent.CountDownLatch;

/**
 * A rank for {@link LaunchCommandTest}: prints the torchrun environment it got and its arguments; with {@code fail}
 * rank 1 exits 7 and the other ranks block until they are stopped.
 */
public final class LaunchProbe
{
    private LaunchProbe()
    {
    }

    public static void main(final String[] args) throws InterruptedException
    {
        final int rank = Integer.parseInt(System.getenv("RANK"));
        System.out.println("rank=" + rank + " world=" + System.getenv("WORLD_SIZE") + " local="
            + System.getenv("LOCAL_RANK") + " master=" + System.getenv("MASTER_ADDR") + ":"
            + System.getenv("MASTER_PORT") + " args=" + String.join(",", args));
        System.out.flush();
        if (args.length > 0 && "fail".equals(args[0]))
        {
            if (1 == rank)
            {
                System.exit(7);
            }
            // Never counted down: only the launcher's stop ends this rank.
            new CountDownLatch(1).await();
        }
    }
}
