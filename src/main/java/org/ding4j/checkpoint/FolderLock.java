package org.ding4j.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
    /** This process's borrowed holds, until closed. */
    private static final Set<FolderLock> BORROWED = ConcurrentHashMap.newKeySet();

    private final Path file;
    private final FileChannel channel;
    /** Null while the hold is borrowed from the process that holds the folder for this one. */
    private volatile FileLock lock;
    /** The process a borrowed hold is borrowed from, else 0. */
    private final long lender;
    /** Counted down when a borrowed hold's waiter took the lock over, or found it lost, or ended. */
    private final CountDownLatch settled = new CountDownLatch(1);
    /** Set when the waiter got the lock only after another process had held it since the lender. */
    private volatile boolean lost;

    private FolderLock(final Path file, final FileChannel channel, final FileLock lock, final long lender)
    {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
        this.lender = lender;
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
                        final FolderLock borrowed = new FolderLock(file, channel, null, holder);
                        BORROWED.add(borrowed);
                        borrowed.takeOverWhenDropped();
                        return borrowed;
                    }
                    throw busy(folder, pid);
                }
                writeOwner(channel);
                return new FolderLock(file, channel, lock, 0);
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

    /**
     * A borrowed hold's waiter: blocks for the lock, which the kernel grants it when the holder drops its own. The
     * lock file must still name the lender then: one that names another process means that process held the folder
     * in between (this one was stopped, say), and the folder is no longer this job's: the lock is let go at once.
     */
    private void takeOverWhenDropped()
    {
        final Thread waiter = org.ding4j.torch.Threads.newThread(() -> {
            try
            {
                final FileLock taken = channel.lock();
                // Read through this channel: closing another descriptor of the file would drop the lock just taken.
                final ByteBuffer text = ByteBuffer.allocate(32);
                channel.read(text, 0);
                if (Long.toString(lender).equals(new String(text.array(), 0, text.position(),
                    StandardCharsets.US_ASCII).trim()))
                {
                    // Held from here on, though writing this process's pid into the file should fail.
                    lock = taken;
                    writeOwner(channel);
                }
                else
                {
                    lost = true;
                    taken.release();
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                // Closed first (this hold ended), or the file cannot be written: the lock goes with the channel.
            }
            finally
            {
                settled.countDown();
            }
        }, "folder-lock");
        waiter.start();
    }

    /**
     * Refuses a write into a folder this process borrowed from a lender that is gone, unless this process took the
     * lock over: a rank stopped (SIGSTOP) while its launcher died, continued after another job took the folder, wrote
     * its last checkpoints and summary among that job's (its run stopped through its peers' vote, not only through
     * its own launcher watch). Files outside borrowed folders, and a process that borrowed none, pass at once.
     *
     * @param target the file about to be written (absolute)
     * @throws IOException naming the folder if it is no longer this job's
     */
    static void requireWritable(final Path target) throws IOException
    {
        for (final FolderLock borrowed : BORROWED)
        {
            if (target.normalize().startsWith(borrowed.folder()) && !borrowed.kept())
            {
                throw new IOException(borrowed.folder() + " is no longer this job's folder: its launcher (pid "
                    + borrowed.lender + "), which held it for this process, is gone, and another process took it");
            }
        }
    }

    /** @return whether this borrowed hold still stands: its lender holds the lock, or this process took it over */
    private boolean kept()
    {
        if (lost)
        {
            return false;
        }
        if (null != lock)
        {
            return true;
        }
        // Still this process's parent: a lender that ended leaves its children to another (a zombie it leaves
        // unreaped, or a process that reused its pid, would pass a liveness test).
        if (lender == parent())
        {
            return true;
        }
        // The kernel hands the lock to the waiter as the lender's process ends: well within this.
        return awaitTakeover(Duration.ofSeconds(2));
    }

    /**
     * @param wait how long to wait for this borrowed hold's waiter to get the lock (its lender dropped it)
     * @return whether it took the lock over; false if the folder was taken by another process in between, or the
     *     wait ended first
     */
    boolean awaitTakeover(final Duration wait)
    {
        try
        {
            return settled.await(wait.toNanos(), TimeUnit.NANOSECONDS) && !lost && null != lock;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return the folder this lock is for (absolute, normalised) */
    public Path folder()
    {
        return file.getParent();
    }

    /** @return whether this process holds the lock itself (a borrowed hold: once it took the lock over) */
    boolean owned()
    {
        return null != lock;
    }

    private static IllegalStateException busy(final Path folder, final String pid)
    {
        return new IllegalStateException(folder.toAbsolutePath() + " is in use by another job (" + who(pid) + "): one "
            + "job writes a folder at a time; give this one another exp_name or wait for that one to end");
    }

    /** The holder as the lock file names it: a holder that took the lock a moment ago still shows its predecessor. */
    private static String who(final String pid)
    {
        try
        {
            final boolean alive = ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false);
            return alive ? "pid " + pid
                : "the lock file names pid " + pid + ", which has ended: its new holder took it a moment ago";
        }
        catch (final NumberFormatException ex)
        {
            return "pid " + pid;
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

    /**
     * Releases the lock, or ends a borrowed hold (the holder's lock stays; the waiter ends with the channel). The file
     * stays: removing it would race with a job that just opened it.
     */
    @Override
    public void close() throws IOException
    {
        // Out of the borrowed set first: a write checked while the channel closes would find the hold gone.
        BORROWED.remove(this);
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
