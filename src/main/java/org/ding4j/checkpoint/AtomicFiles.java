package org.ding4j.checkpoint;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Writes files so that a crash never leaves a truncated file under the final name: the bytes go to a temporary
 * file in an owner-only folder of the write's own beside the target ({@code .NAME.PID-RANDOM.tmp/NAME}), are forced
 * to disk, the temporary file is renamed over the target atomically, and the
 * folder is forced so that the rename itself survives a power cut. A reader sees the old file or the new one. A new
 * file gets the permissions the process's umask gives any file it creates (as {@code torch.save}'s would), a replaced
 * one keeps its own: a serving process or a teammate that could read the old checkpoint reads the new one.
 */
public final class AtomicFiles
{
    /** Ends the writer's pid in a temporary file's name ({@code .NAME.PID-RANDOM.tmp}). */
    private static final String PID_END = "-";
    /**
     * A temporary file's or a write's own folder's name, exactly: {@code .NAME.PID-RANDOM.tmp}. Nothing else in a
     * folder is taken for one (a user's {@code .notes.tmp} or {@code .drafts.tmp/} is theirs).
     */
    private static final java.util.regex.Pattern TEMPORARY =
        java.util.regex.Pattern.compile("\\.(.+)\\.([0-9]+)-([0-9]+)\\.tmp");

    private AtomicFiles()
    {
    }

    /**
     * Atomically replaces (or creates) a file, creating its folder if needed.
     *
     * @param target the final path
     * @param bytes  the whole content
     * @throws IOException if any step fails; the target is then untouched and the temporary file removed
     */
    public static void write(final Path target, final byte[] bytes) throws IOException
    {
        Objects.requireNonNull(bytes, "bytes");
        write(target, out -> out.write(bytes));
    }

    /** Produces a file's content into a stream, so that large files need not exist as one array first. */
    @FunctionalInterface
    public interface Content
    {
        /**
         * @param out where the content goes; buffered, closed by the caller
         * @throws IOException if producing or writing fails
         */
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * Atomically replaces (or creates) a file with streamed content, creating its folder if needed.
     *
     * @param target  the final path
     * @param content writes the whole content
     * @throws IOException if any step fails; the target is then untouched and the temporary file removed
     */
    public static void write(final Path target, final Content content) throws IOException
    {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(content, "content");
        FolderLock.requireWritable(target.toAbsolutePath());
        try
        {
            replace(target.toAbsolutePath(), content);
        }
        catch (final IOException ex)
        {
            // Name the file and the step: a full disk otherwise says only "No space left on device".
            throw new IOException("cannot write " + target.toAbsolutePath() + ": " + ex, ex);
        }
    }

    /**
     * Deletes what a crash left of earlier writes into a folder: the write's own folders this class names
     * {@code .NAME.PID-RANDOM.tmp}, holding nothing but their one file {@code NAME} (and files of that name, which
     * earlier versions wrote beside the target), except those of a process still running (their names carry its pid:
     * a second learner on the folder, in this JVM or another, must not delete a save in progress). Call it before
     * writing into the folder again (a learner does, for its checkpoint folder).
     *
     * A leftover that cannot go (another user's, one removed meanwhile by another cleaner) is left: it must not stop
     * the writes to come. Nothing of another shape is touched: a folder holding anything else than a write leaves, a
     * user's own {@code .notes.tmp} or {@code .drafts.tmp/}.
     *
     * @param folder the folder; nothing happens if it does not exist
     * @return the files and folders removed
     * @throws IOException if the folder cannot be listed
     */
    public static List<Path> removeStaleTemporaries(final Path folder) throws IOException
    {
        if (!Files.isDirectory(folder))
        {
            return List.of();
        }
        final List<Path> removed = new ArrayList<>();
        try (DirectoryStream<Path> stale = Files.newDirectoryStream(folder, AtomicFiles::isTemporary))
        {
            for (final Path file : stale)
            {
                try
                {
                    if (!writtenByALiveProcess(file) && deleteTemporary(stale, file))
                    {
                        removed.add(file);
                    }
                }
                catch (final IOException ex)
                {
                    // Left, as said above.
                }
            }
        }
        return removed;
    }

    /**
     * Deletes an earlier version's temporary file, or a write's own folder with its one file (or none, if the crash
     * came before it), through the listing's own handle on the folder without following a link (a link swapped in for
     * the folder would otherwise lead the deletion elsewhere); where the platform has no such handle, a folder is
     * left.
     *
     * @return whether it was deleted
     */
    private static boolean deleteTemporary(final DirectoryStream<Path> listing, final Path temporary)
        throws IOException
    {
        final Path name = temporary.getFileName();
        final java.util.regex.Matcher shape = TEMPORARY.matcher(name.toString());
        if (!shape.matches())
        {
            return false;
        }
        if (!Files.isDirectory(temporary, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            return Files.deleteIfExists(temporary);
        }
        if (!(listing instanceof java.nio.file.SecureDirectoryStream<Path> secure))
        {
            return false;
        }
        try (java.nio.file.SecureDirectoryStream<Path> own = secure.newDirectoryStream(name,
            java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            final List<Path> inside = new ArrayList<>();
            own.forEach(inside::add);
            if (inside.size() > 1)
            {
                return false;
            }
            if (1 == inside.size())
            {
                final Path file = inside.get(0).getFileName();
                // Only the one file a write leaves, by its own name, and a file: anything else is someone's.
                if (!file.toString().equals(shape.group(1)) || !own.getFileAttributeView(file,
                    java.nio.file.attribute.BasicFileAttributeView.class, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    .readAttributes().isRegularFile())
                {
                    return false;
                }
                own.deleteFile(file);
            }
        }
        secure.deleteDirectory(name);
        return true;
    }

    /** @return whether the temporary file's name carries the pid of a process that still runs */
    private static boolean writtenByALiveProcess(final Path file)
    {
        final java.util.regex.Matcher shape = TEMPORARY.matcher(file.getFileName().toString());
        if (!shape.matches())
        {
            return false;
        }
        try
        {
            return ProcessHandle.of(Long.parseLong(shape.group(2))).map(ProcessHandle::isAlive).orElse(false);
        }
        catch (final NumberFormatException ex)
        {
            return false;
        }
    }

    /**
     * @param file a path
     * @return whether its name is that of a write's own folder ({@code .NAME.PID-RANDOM.tmp})
     */
    public static boolean isTemporary(final Path file)
    {
        return TEMPORARY.matcher(file.getFileName().toString()).matches();
    }

    /**
     * Replaces the file through a temporary one in a folder of this write's own, owner-only ({@code rwx------}), so
     * that no other user can put a link in its place, written through a FileOutputStream and synced through its
     * descriptor: neither is closed by an interrupt of the writing thread (the application cancelling its training
     * thread, as often as it likes), which would close a FileChannel in mid-write and lose the save.
     */
    private static void replace(final Path absolute, final Content content) throws IOException
    {
        final Path folder = absolute.getParent();
        Files.createDirectories(folder);
        final String name = absolute.getFileName().toString();
        Path own = null;
        for (int attempt = 0; null == own; attempt++)
        {
            final Path candidate = folder.resolve("." + name + "." + ProcessHandle.current().pid() + PID_END
                + Long.toUnsignedString(java.util.concurrent.ThreadLocalRandom.current().nextLong()) + ".tmp");
            try
            {
                own = createOwnerOnlyFolder(candidate);
            }
            catch (final java.nio.file.FileAlreadyExistsException ex)
            {
                if (attempt >= 100)
                {
                    throw ex;
                }
            }
        }
        // The file itself gets the permissions the umask gives any new file: Files.createTempFile would make it
        // owner-only (0600), and the rename would carry that onto every checkpoint and summary.
        final Path temp = own.resolve(name);
        try
        {
            try (FileOutputStream file = new FileOutputStream(temp.toFile()))
            {
                final OutputStream out = new BufferedOutputStream(file, 1 << 16);
                content.writeTo(out);
                out.flush();
                file.getFD().sync();
            }
            // After the write: a read-only mode copied before it would have stopped it.
            keepPermissions(absolute, temp);
            try
            {
                Files.move(temp, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            catch (final AtomicMoveNotSupportedException ex)
            {
                throw new IOException("cannot replace " + absolute + " atomically on this file system", ex);
            }
            forceFolder(folder);
        }
        catch (final IOException | RuntimeException ex)
        {
            try
            {
                Files.deleteIfExists(temp);
                Files.deleteIfExists(own);
            }
            catch (final IOException cleanup)
            {
                ex.addSuppressed(cleanup);
            }
            throw ex;
        }
        // The target is written: a folder that will not go is a leftover for the next cleanup, not a failed save.
        try
        {
            Files.deleteIfExists(own);
        }
        catch (final IOException ex)
        {
            // As said.
        }
    }

    private static Path createOwnerOnlyFolder(final Path folder) throws IOException
    {
        final java.util.Set<java.nio.file.attribute.PosixFilePermission> ownerOnly =
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------");
        final Path made;
        try
        {
            made = Files.createDirectory(folder, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                ownerOnly));
        }
        catch (final UnsupportedOperationException ex)
        {
            // No POSIX permissions on this file system: no other users' modes to keep out either.
            return Files.createDirectory(folder);
        }
        // Set again: the mode given at creation passes through the umask (0277 would leave it without write).
        final java.nio.file.attribute.PosixFileAttributeView view = Files.getFileAttributeView(made,
            java.nio.file.attribute.PosixFileAttributeView.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        if (null != view)
        {
            view.setPermissions(ownerOnly);
        }
        return made;
    }

    /**
     * The file being replaced keeps its permissions, as far as the file system lets it: a new file, one without POSIX
     * permissions or one that refuses the change keeps the umask's.
     */
    private static void keepPermissions(final Path existing, final Path temp)
    {
        try
        {
            // Not through a link put in the temporary file's place: that would change another file's mode.
            final java.nio.file.attribute.PosixFileAttributeView view = Files.getFileAttributeView(temp,
                java.nio.file.attribute.PosixFileAttributeView.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if (null != view)
            {
                view.setPermissions(Files.getPosixFilePermissions(existing));
            }
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            // Best effort: the content is what must not be lost.
        }
    }

    private static void forceFolder(final Path folder)
    {
        // A folder has no stream to sync, so a channel it is; the interrupt it would be closed by waits until after.
        final boolean interrupted = Thread.interrupted();
        try (FileChannel channel = FileChannel.open(folder, StandardOpenOption.READ))
        {
            channel.force(true);
        }
        catch (final IOException ex)
        {
            // Some file systems cannot open a folder for reading (and an interrupt that came meanwhile closed it);
            // the rename is atomic either way.
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
