package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two JVMs started at the same moment on an empty JavaCPP cache both load the natives and run: the first extracts
 * under {@link Natives}' lock while the second waits for it (before that lock, 6 of 10 such pairs died with SIGBUS
 * in the dynamic loader, mapping a library the other process was still writing).
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
