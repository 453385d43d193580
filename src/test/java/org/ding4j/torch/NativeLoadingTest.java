package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two JVMs started at the same moment on an empty JavaCPP cache both load the natives and run: the first extracts
 * under {@link Natives}' lock while the second waits for it (before that lock, 6 of 10 such pairs died with SIGBUS
 * in the dynamic loader, mapping a library the other process was still writing). On a machine with Debian's
 * {@code libtorch-dev} (CI installs it) an empty cache's load also crashed alone: see {@code Natives.extractLibtorch}.
 */
class NativeLoadingTest
{
    private static final int PAIRS = 3;

    @TempDir
    Path dir;

    @Test
    void shouldLoadInTwoProcessesStartedTogetherOnAnEmptyCache() throws Exception
    {
        for (int pair = 0; pair < PAIRS; pair++)
        {
            final Path cache = dir.resolve("cache" + pair);
            final List<Process> processes = new ArrayList<>();
            for (int i = 0; i < 2; i++)
            {
                final List<String> command = ChildJvm.javaCommand(dir, NativeLoadProbe.class.getName());
                command.add(1, "-Dorg.bytedeco.javacpp.cachedir=" + cache);
                processes.add(new ProcessBuilder(command).redirectErrorStream(true).start());
            }
            for (final Process process : processes)
            {
                final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(process.waitFor(120, TimeUnit.SECONDS), output);
                assertEquals(0, process.exitValue(), "pair " + pair + ":\n" + output);
                assertTrue(output.contains("sum 12.0 in-use true"), output);
            }
            assertTrue(Files.exists(cache.resolve(Natives.LOCK_FILE)), "the lock lives in the cache folder");
        }
    }

    /**
     * A process that holds the load lock for long (one stopped with Ctrl-Z while it loaded) makes the next one wait:
     * after a few seconds it says so, naming the holder's pid, and loads once the lock is free. A rank of
     * {@code ding4j launch}, whose launcher filled the cache, does not wait for the lock at all.
     */
    @Test
    void aProcessWaitingForAnotherOnesLoadShouldSaySoAndALaunchedRankShouldNotWait() throws Exception
    {
        final Path cache = Files.createDirectories(dir.resolve("held"));
        final Path lockFile = cache.resolve(Natives.LOCK_FILE);
        final ChildJvm child;
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = channel.lock())
        {
            // The waiting process names the holder, this JVM, from the kernel's table of locks.
            final long holder = ProcessHandle.current().pid();
            final List<String> command = ChildJvm.javaCommand(dir, NativeLoadProbe.class.getName());
            command.add(1, "-Dorg.bytedeco.javacpp.cachedir=" + cache);
            child = ChildJvm.start(0, new ProcessBuilder(command),
                line -> line.contains(" s for process " + holder + " to finish loading ding4j's native libraries"));
            assertTrue(child.reached.await(120, TimeUnit.SECONDS), child::output);
            assertTrue(child.process.isAlive(), child::output);
        }
        assertEquals(0, child.await(120), child::output);
        assertTrue(child.output().contains("sum 12.0 in-use true"), child::output);

        // The cache is filled now; a rank whose launcher filled it loads while the lock is held.
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE); FileLock lock = channel.lock())
        {
            final List<String> command = ChildJvm.javaCommand(dir, NativeLoadProbe.class.getName());
            command.add(1, "-Dorg.bytedeco.javacpp.cachedir=" + cache);
            command.add("trusted");
            final ChildJvm rank = ChildJvm.start(1, new ProcessBuilder(command), line -> false);
            assertEquals(0, rank.await(120), rank::output);
            assertTrue(rank.output().contains("sum 12.0 in-use true"), rank::output);
            assertTrue(!rank.output().contains("waiting for"), rank::output);
        }
    }

    /**
     * The start-up and exit the command line uses: no CUDA runtime in a CPU build, and an exit that skips libtorch's static destructors but keeps the exit code, Java's shutdown hooks and
     * everything printed.
     */
    @Test
    void shouldLoadNoCudaInACpuBuildAndExitWithTheCodeAndHooksWithoutNativeDestructors() throws Exception
    {
        final List<String> command = ChildJvm.javaCommand(dir, NativeLoadProbe.class.getName());
        command.add("exit");
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), output);
        assertEquals(3, child.exitValue(), output);
        for (final String line : List.of("cuda mapped in a CPU build false", "load seconds true",
            "sum 12.0 in-use true", "skipping destructors true", "shutdown hook ran"))
        {
            assertTrue(output.contains(line), "expected '" + line + "' in:\n" + output);
        }
    }
}
