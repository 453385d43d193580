package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A folder's lock held by a launcher for its rank (a real child JVM): borrowed, and taken over when dropped. */
class FolderLockTest
{
    @TempDir
    Path dir;

    /**
     * The rank writes under its launcher's hold; when the launcher's lock goes (the launcher killed while the rank
     * still saves), the rank takes the lock over at once, so that no other job takes the folder from under it.
     */
    @Test
    void aBorrowedHoldShouldBeTakenOverWhenItsHolderDropsIt() throws Exception
    {
        final long self = ProcessHandle.current().pid();
        final FolderLock held = FolderLock.acquire(dir);
        final List<String> command = ChildJvm.javaCommand(dir, FolderLockProbe.class.getName());
        command.addAll(List.of(dir.toString(), Long.toString(self)));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader said = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8)))
        {
            assertEquals("borrowed", said.readLine());
            held.close();
            assertEquals("kept", said.readLine());
            assertEquals("wrote", said.readLine());
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> FolderLock.acquire(dir).close());
            assertTrue(refused.getMessage().contains("(pid " + child.pid() + ")"), refused::getMessage);
            child.getOutputStream().close();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        }
        finally
        {
            child.destroyForcibly();
        }
        // Free again once the rank ended.
        FolderLock.acquire(dir).close();
    }

    /**
     * A rank stopped (SIGSTOP) while its launcher died, and another job took and let go of the folder meanwhile: the
     * rank, continued, gets the lock, but the lock file names that job, so it lets go, and its writes into the folder
     * are refused (before, it wrote its final checkpoint and summary into the other job's folder, and kept that job's
     * lock).
     */
    @Test
    void aHoldTakenByAnotherProcessMeanwhileShouldBeKnownLost() throws Exception
    {
        final FolderLock held = FolderLock.acquire(dir);
        final List<String> command = ChildJvm.javaCommand(dir, FolderLockProbe.class.getName());
        command.addAll(List.of(dir.toString(), Long.toString(ProcessHandle.current().pid())));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader said = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8)))
        {
            assertEquals("borrowed", said.readLine());
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(child.pid())).start().waitFor());
            // The signal is delivered, not yet taken: a waiter woken by the release before it stops takes the lock.
            awaitStopped(child.pid());
            held.close();
            final List<String> other = ChildJvm.javaCommand(dir, FolderLockProbe.class.getName());
            other.add(dir.toString());
            final Process job = new ProcessBuilder(other).redirectErrorStream(true).start();
            final String jobSaid = new String(job.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(job.waitFor(60, TimeUnit.SECONDS) && jobSaid.startsWith("acquired"), jobSaid);
            assertEquals(0, new ProcessBuilder("kill", "-CONT", Long.toString(child.pid())).start().waitFor());
            assertEquals("lost", said.readLine());
            final String write = said.readLine();
            assertTrue(write.startsWith("refused: ") && write.contains("is no longer this job's folder"), write);
            // It let go: the folder is free for the next job, though the rank still runs.
            FolderLock.acquire(dir).close();
            child.getOutputStream().close();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        }
        finally
        {
            child.destroyForcibly();
        }
    }

    /** Returns once every thread of the process is stopped (state T), within 30 s (polled: no signal says so). */
    private static void awaitStopped(final long pid) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true)
        {
            boolean all = true;
            try (java.util.stream.Stream<Path> threads = java.nio.file.Files.list(Path.of("/proc", pid + "", "task")))
            {
                for (final Path thread : threads.toList())
                {
                    final String stat = java.nio.file.Files.readString(thread.resolve("stat"));
                    all &= stat.substring(stat.lastIndexOf(')') + 1).strip().startsWith("T");
                }
            }
            if (all)
            {
                return;
            }
            assertTrue(System.nanoTime() - deadline < 0, "process " + pid + " did not stop");
            Thread.sleep(1);
        }
    }
}
