package org.ding4j.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One job at a time in an output folder: an OS file lock ({@code fcntl}, released by the OS when the process dies,
 * even by SIGKILL) on {@value #NAME} in the folder, which holds the owner's process id. A second job, in this process
 * or another, is refused with the holder's pid instead of overwriting the first one's checkpoints and summary.
 * <p>
 * An {@code fcntl} lock belongs to the process and is dropped when the process closes any descriptor of the file, so
 * a folder this process holds is refused from the process's own table, without opening the lock file again.
 * <p>
 * A folder this process's parent holds for it (a launcher between a job's attempts: {@link #acquire(Path, long)})
 * is taken without a lock of this process's own; the holder's lock keeps other jobs out, and a thread of this
 * process waits for the lock meanwhile, so that it takes the lock over the moment the holder drops it (the holder
 * killed while this process still writes).
 */
public final class FolderLock implements AutoCloseable
{
    /** The lock file's name in the folder. */
    public static final String NAME = ".ding4j.lock";

    /** The lock files this process holds (absolute, normalised). */
    private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

    private final Path file;
    private final FileChannel channel;
    /** Null while the hold is borrowed from the process that holds the folder for this one. */
    private volatile FileLock lock;

    private FolderLock(final Path file, final FileChannel channel, final FileLock lock)
    {
        this.file = file;
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
        return acquire(folder, 0);
    }

    /**
     * @param folder the output folder (it must exist)
     * @param holder the process that may hold the folder for this one (its launcher, which must be this process's
     *               parent), 0 for none: its hold is taken as this process's own
     * @return the lock, held until {@link #close()} or the process's end (or the holder's hold, borrowed)
     * @throws IllegalStateException naming the folder and the holder's pid if another job holds it
     * @throws IOException if the lock file cannot be opened or written
     */
    public static FolderLock acquire(final Path folder, final long holder) throws IOException
    {
        final Path file = folder.resolve(NAME).toAbsolutePath().normalize();
        if (!HELD.add(file))
        {
            throw busy(folder, Long.toString(ProcessHandle.current().pid()));
        }
        try
        {
            final FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
            try
            {
                final FileLock lock = channel.tryLock();
                if (null == lock)
                {
                    // Another process holds it (this one holds no lock on the file, so reading it drops none).
                    final String pid = holder(file);
                    if (holder > 0 && Long.toString(holder).equals(pid) && holder == parent())
                    {
                        final FolderLock borrowed = new FolderLock(file, channel, null);
                        borrowed.takeOverWhenDropped();
                        return borrowed;
                    }
                    throw busy(folder, pid);
                }
                writeOwner(channel);
                return new FolderLock(file, channel, lock);
            }
            catch (final IOException | RuntimeException ex)
            {
                channel.close();
                throw ex;
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            HELD.remove(file);
            throw ex;
        }
    }

    private static void writeOwner(final FileChannel channel) throws IOException
    {
        final byte[] pid = (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
        channel.truncate(0);
        channel.write(ByteBuffer.wrap(pid), 0);
        channel.force(false);
    }

    private static long parent()
    {
        return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
    }

    /** A borrowed hold's waiter: blocks for the lock, which the kernel grants it when the holder drops its own. */
    private void takeOverWhenDropped()
    {
        final Thread waiter = org.ding4j.torch.Threads.newThread(() -> {
            try
            {
                final FileLock taken = channel.lock();
                writeOwner(channel);
                lock = taken;
            }
            catch (final IOException | RuntimeException ex)
            {
                // Closed first (this hold ended), or the file cannot be written: the lock goes with the channel.
            }
        }, "folder-lock");
        waiter.start();
    }

    /** @return whether this process holds the lock itself (a borrowed hold: once it took the lock over) */
    boolean owned()
    {
        return null != lock;
    }

    private static IllegalStateException busy(final Path folder, final String pid)
    {
        return new IllegalStateException(folder.toAbsolutePath() + " is in use by another job (pid " + pid + "): one "
            + "job writes a folder at a time; give this one another exp_name or wait for that one to end");
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

    /**
     * Releases the lock, or ends a borrowed hold (the holder's lock stays; the waiter ends with the channel). The file
     * stays: removing it would race with a job that just opened it.
     */
    @Override
    public void close() throws IOException
    {
        try
        {
            final FileLock held = lock;
            if (null != held && held.isValid())
            {
                held.release();
            }
        }
        finally
        {
            try
            {
                channel.close();
            }
            finally
            {
                HELD.remove(file);
            }
        }
    }
}
