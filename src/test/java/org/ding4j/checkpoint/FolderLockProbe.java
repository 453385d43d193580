package org.ding4j.checkpoint;

import java.nio.file.Path;

/** A child JVM of the folder-lock tests: tries to take a folder's lock and says whether it got it. */
public final class FolderLockProbe
{
    private FolderLockProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (FolderLock lock = FolderLock.acquire(Path.of(args[0])))
        {
            System.out.println("acquired");
        }
        catch (final IllegalStateException ex)
        {
            System.out.println("refused: " + ex.getMessage());
        }
    }
}
