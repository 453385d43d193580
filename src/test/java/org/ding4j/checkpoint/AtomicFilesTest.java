package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The permissions of what {@link AtomicFiles} writes: a new file gets what the umask gives any new file (a temporary
 * file made owner-only once made every checkpoint and summary unreadable to a serving process running as another
 * user), a replaced file keeps its own, and no temporary file is left.
 */
class AtomicFilesTest
{
    @TempDir
    Path dir;

    /**
     * An interrupt of the writing thread, before or in the middle of a write (it closes the file channel), loses no
     * save: the file is written whole, and the thread keeps its interrupt for the code that owns it.
     */
    @Test
    void aWriteOnAnInterruptedThreadLandsWholeAndKeepsTheInterrupt() throws IOException
    {
        final Path file = dir.resolve("summary.json");
        final byte[] big = new byte[1 << 20];
        java.util.Arrays.fill(big, (byte)'x');
        Thread.currentThread().interrupt();
        try
        {
            AtomicFiles.write(file, big);
        }
        finally
        {
            org.junit.jupiter.api.Assertions.assertTrue(Thread.interrupted(), "the interrupt kept");
        }
        assertArrayEquals(big, Files.readAllBytes(file));

        final int[] calls = {0};
        try
        {
            AtomicFiles.write(file, out -> {
                calls[0]++;
                // Interrupted over and over while the file is half written (a FileChannel would close at the first).
                for (int at = 0; at < big.length; at += 1 << 10)
                {
                    Thread.currentThread().interrupt();
                    out.write(big, at, 1 << 10);
                }
            });
        }
        finally
        {
            org.junit.jupiter.api.Assertions.assertTrue(Thread.interrupted(), "the interrupt kept");
        }
        assertEquals(1, calls[0], "written once, whole");
        assertArrayEquals(big, Files.readAllBytes(file));
        try (Stream<Path> files = Files.list(dir))
        {
            assertEquals(List.of(file), files.toList(), "no temporary file left");
        }
    }

    @Test
    void aNewFileShouldGetTheUmasksPermissionsAndAReplacedOneKeepItsOwn() throws IOException
    {
        final Path reference = Files.createFile(dir.resolve("reference"));
        final Path file = dir.resolve("ckpt_best.pth.tar");
        AtomicFiles.write(file, "first".getBytes(StandardCharsets.UTF_8));
        assertEquals(Files.getPosixFilePermissions(reference), Files.getPosixFilePermissions(file),
            "as any new file here");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        AtomicFiles.write(file, "second".getBytes(StandardCharsets.UTF_8));
        assertEquals(PosixFilePermissions.fromString("rw-r-----"), Files.getPosixFilePermissions(file));
        assertArrayEquals("second".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(file));
        // A read-only file is replaced too, and stays read-only (its mode is applied after the write).
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
        AtomicFiles.write(file, "third".getBytes(StandardCharsets.UTF_8));
        assertEquals(PosixFilePermissions.fromString("r--r--r--"), Files.getPosixFilePermissions(file));
        assertArrayEquals("third".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(file));
        try (Stream<Path> files = Files.list(dir))
        {
            assertEquals(List.of(file, reference), files.sorted().toList(), "no temporary file left");
        }
    }
    /**
     * A crash's leftovers are removed, but not the temporary file of a save in progress by a live process (a second
     * learner on the folder, in this JVM or another): once deleting it made 9 of 59 such saves fail.
     */
    @Test
    void staleTemporariesShouldGoButNotALiveWritersOwn() throws IOException
    {
        final Path live = Files.createFile(dir.resolve(".a.pth.tar." + ProcessHandle.current().pid() + "-42.tmp"));
        final Path dead = Files.createFile(dir.resolve(".a.pth.tar.99999999-42.tmp"));
        final Path older = Files.createFile(dir.resolve(".a.pth.tar123456.tmp"));
        // A crashed write's own folder, with its half-written file; a live writer's folder; a folder that holds more
        // than a write leaves (a subfolder), which cannot go and must not stop the cleanup.
        final Path crashed = Files.createDirectory(dir.resolve(".a.pth.tar.99999998-7.tmp"));
        Files.writeString(crashed.resolve("a.pth.tar"), "half");
        final Path writing = Files.createDirectory(dir.resolve(".b.pth.tar." + ProcessHandle.current().pid()
            + "-9.tmp"));
        Files.writeString(writing.resolve("b.pth.tar"), "in progress");
        final Path odd = Files.createDirectories(dir.resolve(".c.pth.tar.99999997-1.tmp").resolve("deeper"));
        // A user's own files and folders that merely start with '.' and end with '.tmp', and a write's folder shape
        // holding something other than its one file: none of them is a write's, all stay.
        final Path notes = Files.writeString(dir.resolve(".notes.tmp"), "mine");
        final Path drafts = Files.createDirectory(dir.resolve(".drafts.tmp"));
        Files.writeString(drafts.resolve("a.txt"), "mine");
        final Path foreign = Files.createDirectory(dir.resolve(".d.pth.tar.99999996-3.tmp"));
        Files.writeString(foreign.resolve("notes.txt"), "mine");
        assertEquals(List.of(crashed, dead), AtomicFiles.removeStaleTemporaries(dir).stream().sorted().toList());
        org.junit.jupiter.api.Assertions.assertFalse(Files.exists(crashed));
        assertEquals(true, Files.exists(live));
        assertEquals("in progress", Files.readString(writing.resolve("b.pth.tar")));
        assertEquals(true, Files.exists(odd), "left");
        assertEquals("mine", Files.readString(notes));
        assertEquals("mine", Files.readString(drafts.resolve("a.txt")));
        assertEquals("mine", Files.readString(foreign.resolve("notes.txt")));
        assertEquals(true, Files.exists(older), "not this class's shape");
    }
}
