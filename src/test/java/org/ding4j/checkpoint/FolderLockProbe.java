package org.ding4j.checkpoint;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A child JVM of the folder-lock tests: tries to take a folder's lock and says whether it got it. With a second
 * argument (its parent's pid, which holds the folder for it) it borrows the hold, says so, then says whether it took
 * the lock over once its parent dropped it ("kept") or found the folder taken in between ("lost"), whether a write into
 * the folder then goes through, and ends when its standard input does.
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
                // The parent drops its lock once it read "borrowed" (as a dying launcher does).
                System.out.println(lock.awaitTakeover(Duration.ofSeconds(60)) ? "kept" : "lost");
                try
                {
                    AtomicFiles.write(Path.of(args[0], "probe.txt"), new byte[] {1});
                    System.out.println("wrote");
                }
                catch (final java.io.IOException ex)
                {
                    System.out.println("refused: " + ex.getMessage());
                }
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
        }
        catch (final IllegalStateException ex)
        {
            System.out.println("refused: " + ex.getMessage());
        }
    }
}
