package org.ding4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.ding4j.internal.JvmFlags;
import org.ding4j.testing.ExamplePrograms;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's embedding example ({@code examples/embedding/EmbeddedTraining.java}) compiled against the library as
 * an application would compile it, and run in its own JVM: it trains, its hook prints, the loss falls, the run's
 * checkpoint loads into a fresh learner. Without the JVM flag the learner refuses to start with an error naming it,
 * and writes nothing.
 */
class EmbeddingExampleTest
{
    private static final Path SOURCE = Path.of("examples", "embedding");
    private static final Pattern LOSS = Pattern.compile("update (\\d+) loss ([0-9.]+)");

    @TempDir
    static Path classes;

    @TempDir
    Path dir;

    @BeforeAll
    static void compile() throws IOException
    {
        ExamplePrograms.compile(SOURCE, classes);
    }

    private static Process run(final Path exp, final boolean withFlag) throws IOException
    {
        return ExamplePrograms.start(classes, withFlag, "EmbeddedTraining", exp.toString());
    }

    private static String outputOf(final Process process) throws Exception
    {
        return ExamplePrograms.outputOf(process);
    }

    @Test
    void shouldTrainThroughItsOwnPolicyAndHookThenLoadTheCheckpoint() throws Exception
    {
        final Path exp = dir.resolve("run");
        final Process process = run(exp, true);
        final String output = outputOf(process);
        assertEquals(0, process.exitValue(), output);
        final List<Double> losses = new ArrayList<>();
        final Matcher m = LOSS.matcher(output);
        while (m.find())
        {
            losses.add(Double.parseDouble(m.group(2)));
        }
        assertEquals(3, losses.size(), "its hook prints at updates 100, 200, 300:\n" + output);
        assertTrue(losses.get(2) < losses.get(0), "the loss falls: " + losses);
        assertTrue(output.contains("run DONE"), output);
        assertTrue(output.contains("iteration_300.pth.tar at update 300"), output);
        assertTrue(Files.isRegularFile(exp.resolve("log/learner/learner_logger.txt")));
    }

    @Test
    void shouldNameTheMissingJvmFlagAndWriteNothing() throws Exception
    {
        final Path exp = dir.resolve("noflag");
        final Process process = run(exp, false);
        final String output = outputOf(process);
        assertTrue(0 != process.exitValue(), output);
        assertTrue(output.contains("ding4j needs the JVM flag " + JvmFlags.AGRONA_FLAG), output);
        assertFalse(Files.exists(exp), "nothing is written before the learner is built");
    }
}
