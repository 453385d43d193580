package org.ding4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

import org.ding4j.env.Env;
import org.ding4j.env.EnvChecker;
import org.ding4j.env.TimeLimit;
import org.ding4j.testing.ExamplePrograms;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's own-environment example ({@code examples/own-env}: a user's {@code Docking} env, trained with DQN and
 * with SAC through the public API) compiled as an application would compile it: the env passes the env checker in
 * both its forms, and a short run of each program trains, evaluates and writes its checkpoints and summary.
 */
class OwnEnvExampleTest
{
    private static final Path SOURCES = Path.of("examples", "own-env");

    @TempDir
    static Path classes;

    @TempDir
    Path dir;

    @BeforeAll
    static void compile() throws IOException
    {
        ExamplePrograms.compile(SOURCES, classes);
    }

    @Test
    void theEnvShouldPassTheCheckerInBothForms() throws Exception
    {
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
            getClass().getClassLoader()))
        {
            for (final String name : new String[] {"Docking", "Docking$Thrusters"})
            {
                final Env env = (Env)loader.loadClass(name).getConstructor().newInstance();
                EnvChecker.check(new TimeLimit(env, 200), 1, 1000);
            }
        }
    }

    /** Without the one required JVM flag the program fails at once, naming it, and writes nothing. */
    @Test
    void withoutTheFlagNothingShouldBeWritten() throws Exception
    {
        final Path exp = dir.resolve("no-flag");
        final Process process = ExamplePrograms.start(classes, false, "TrainDockingSac", exp.toString(), "3000");
        final String output = ExamplePrograms.outputOf(process);
        assertTrue(0 != process.exitValue(), output);
        assertTrue(output.contains("--add-exports java.base/jdk.internal.misc=ALL-UNNAMED"), output);
        assertTrue(!Files.exists(exp), "nothing written: " + output);
    }

    /** The README's own-environment example is this program, verbatim from its class declaration on. */
    @Test
    void theReadmeShouldShowTheProgramCiRuns() throws IOException
    {
        final String source = Files.readString(SOURCES.resolve("TrainDockingSac.java"));
        final String shown = source.substring(source.indexOf("public final class TrainDockingSac")).strip();
        final String readme = Files.readString(Path.of("README.md"));
        assertTrue(readme.contains(shown), "README.md shows TrainDockingSac.java as it is");
        assertTrue(readme.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 15 * 1024,
            "README.md within 15 KB");
    }

    @Test
    void shortRunsOfBothProgramsShouldTrainAndWriteTheirRuns() throws Exception
    {
        for (final String main : new String[] {"TrainDockingDqn", "TrainDockingSac"})
        {
            final Path exp = dir.resolve(main);
            final Process process = ExamplePrograms.start(classes, true, main, exp.toString(), "3000");
            final String output = ExamplePrograms.outputOf(process);
            assertEquals(0, process.exitValue(), main + ":\n" + output);
            assertTrue(output.contains(" on Docking: "), main + ":\n" + output);
            assertTrue(output.contains("env steps      0 | updates     0 | eval"), main + ":\n" + output);
            assertTrue(Files.isRegularFile(exp.resolve("summary.json")), main + ":\n" + output);
            assertTrue(Files.isRegularFile(exp.resolve("ckpt/ckpt_best.pth.tar")), main + ":\n" + output);
            assertEquals(true, Files.readString(exp.resolve("total_config.yaml")).contains("Docking"), main);
        }
    }
}
