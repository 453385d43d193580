package org.ding4j.checkpoint;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A child JVM of the folder-lock tests: tries to take a folder's lock and says whether it got it. With a second
 * argument (its parent's pid, which holds the folder for it) it borrows the hold, says so, waits until it has taken
 * the lock over (its parent dropped it), says so, and keeps it until its standard input ends.
 */
public final class FolderLockProbe
{
    private FolderLockProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (FolderLock lock = FolderLock.acquire(Path.of(args[0]), args.length > 1 ? Long.parseLong(args[1]) : 0))
        {
            System.out.println(lock.owned() ? "acquired" : "borrowed");
            if (args.length > 1)
            {
                // Within the test's own timeout: the parent drops its lock once it read "borrowed".
                final long deadline = System.nanoTime() + 60_000_000_000L;
                while (!lock.owned() && System.nanoTime() - deadline < 0)
                {
                    Thread.sleep(5);
                }
                System.out.println(lock.owned() ? "took over" : "never took over");
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
        }
        catch (final IllegalStateException ex)
        {
            System.out.println("refused: " + ex.getMessage());
        }
    }
}
