package org.ding4j.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One job at a time in an output folder: an OS file lock ({@code fcntl}, released by the OS when the process dies,
 * even by SIGKILL) on {@value #NAME} in the folder, which holds the owner's process id. A second job, in this process
 * or another, is refused with the holder's pid instead of overwriting the first one's checkpoints and summary.
 */
public final class FolderLock implements AutoCloseable
{
    /** The lock file's name in the folder. */
    public static final String NAME = ".ding4j.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private FolderLock(final FileChannel channel, final FileLock lock)
    {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * @param folder the output folder (it must exist)
     * @return the lock, held until {@link #close()} or the process's end
     * @throws IllegalStateException naming the folder and the holder's pid if another job holds it
     * @throws IOException if the lock file cannot be opened or written
     */
    public static FolderLock acquire(final Path folder) throws IOException
    {
        final Path file = folder.resolve(NAME);
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE);
        FileLock lock = null;
        try
        {
            lock = channel.tryLock();
        }
        catch (final OverlappingFileLockException ex)
        {
            // Held by this process (another pipeline in the same JVM): as busy as a lock of another process.
            lock = null;
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
        if (null == lock)
        {
            channel.close();
            throw new IllegalStateException(folder.toAbsolutePath() + " is in use by another job (pid "
                + holder(file) + "): one job writes a folder at a time; give this one another exp_name or wait for "
                + "that one to end");
        }
        try
        {
            final byte[] pid = (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(pid), 0);
            channel.force(false);
            return new FolderLock(channel, lock);
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    private static String holder(final Path file)
    {
        try
        {
            final String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
            return text.isEmpty() ? "unknown" : text;
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }

    /** Releases the lock (the file stays: removing it would race with a job that just opened it). */
    @Override
    public void close() throws IOException
    {
        try
        {
            lock.release();
        }
        finally
        {
            channel.close();
        }
    }
}
