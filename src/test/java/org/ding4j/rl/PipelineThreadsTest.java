package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An application that runs a pipeline without setting thread counts gets ding4j's (1 libtorch intra-op thread, 1
 * OpenBLAS thread), not the libraries' defaults of a spinning thread per core, under which a DQN run beside busy
 * application threads fell from 700 to 40 updates/s; counts the application set first are kept. Child JVMs, since
 * the counts are per process.
 */
class PipelineThreadsTest
{
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource({"defaults, threads intra-op 1 blas 1", "own, threads intra-op 1 blas 2"})
    void aPipelineShouldRunOnDing4jsThreadCountsUnlessTheApplicationSetItsOwn(final String mode, final String expected)
        throws Exception
    {
        // On one CPU the libraries' defaults are 1 thread too, and the case tells nothing.
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.getRuntime().availableProcessors() > 1,
            "one CPU: the libraries' defaults are ding4j's");
        final List<String> command = ChildJvm.javaCommand(dir, PipelineThreadsProbe.class.getName());
        command.add(dir.resolve(mode).toString());
        command.add(mode);
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> false);
        assertEquals(0, child.await(120), child::output);
        child.firstLine(expected::equals);
    }
}
