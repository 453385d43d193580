package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Jobs stay apart: two launches on one port never pair their ranks (one runs, the other is refused with a clear
 * error before any collective), and ranks do not outlive a launcher killed with SIGKILL.
 */
class JobIsolationTest
{
    /** One in-process {@code ding4j launch}, its output and exit code. */
    private record Launch(int code, String out, String err)
    {
    }

    private static Launch launch(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        final int code = cli.execute(args);
        return new Launch(code, out.toString(), err.toString());
    }

    @Test
    void twoLaunchesOnOnePortShouldNeverMixTheirRanks(@TempDir final Path dir) throws Exception
    {
        final int port = ChildJvm.freePort();
        // The job that gets the port runs until the other has been refused (the stop file), 90 s at most: a fixed
        // run time could end before four loaded JVMs reach the rendezvous, and then both jobs would run.
        final String stop = dir.resolve("stop").toString();
        final CompletableFuture<Launch> a = CompletableFuture.supplyAsync(() -> launch("launch", "--nproc", "2",
            "--master-port", Integer.toString(port), "--main", JobProbe.class.getName(), "--", "1", "90", stop));
        final CompletableFuture<Launch> b = CompletableFuture.supplyAsync(() -> launch("launch", "--nproc", "2",
            "--master-port", Integer.toString(port), "--main", JobProbe.class.getName(), "--", "2", "90", stop));
        CompletableFuture.anyOf(a, b).get(120, TimeUnit.SECONDS);
        Files.createFile(dir.resolve("stop"));
        final List<Launch> both = List.of(a.get(120, TimeUnit.SECONDS), b.get(120, TimeUnit.SECONDS));
        for (final Launch launch : both)
        {
            assertFalse(launch.out().contains("MIXED"), launch.out());
        }
        final long ran = both.stream().filter(l -> 0 == l.code()).count();
        assertEquals(1, ran, () -> "exactly one job runs: " + both);
        final Launch refused = both.stream().filter(l -> 0 != l.code()).findFirst().orElseThrow();
        // Refused by its rank 0, or by its launcher when the other job's store already listened on the port.
        assertTrue(refused.out().contains("another job uses this port") || refused.out().contains("the port is in use")
            || refused.err().contains("which cannot be listened on here"), refused::toString);
        final Launch done = both.stream().filter(l -> 0 == l.code()).findFirst().orElseThrow();
        assertTrue(done.out().contains("[rank 0] DONE 0") && done.out().contains("[rank 1] DONE 1"), done::toString);
    }

    /**
     * Every algorithm's ranks stop when their launcher is killed with SIGKILL (it cannot forward anything): each
     * rank's {@code Main} watches the launcher and stops itself as SIGTERM would, so rank 0 saves
     * {@code ckpt_interrupt} and writes {@code summary.json}. A stop value no run reaches: only the stop ends it.
     */
    private static String logOf(final Path exp)
    {
        try
        {
            return Files.readString(exp.resolve("log/learner/learner_logger.txt"));
        }
        catch (final java.io.IOException ex)
        {
            return "(no log: " + ex + ")";
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"dqn", "sac"})
    void ranksShouldStopWhenTheirLauncherIsKilled(final String algorithm, @TempDir final Path dir) throws Exception
    {
        final Path exp = dir.resolve("job");
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.addAll(List.of("launch", "--nproc", "1", "--", "train", "--set", "exp_name=" + exp, "--set",
            "env.stop_value=1000", "--set", "pipeline.max_env_step=100000000"));
        if ("sac".equals(algorithm))
        {
            command.addAll(List.of("--config", Path.of("examples/pendulum_sac.yaml").toAbsolutePath().toString()));
        }
        final ChildJvm launcher = ChildJvm.start(0, new ProcessBuilder(command),
            line -> line.startsWith("[rank 0] env steps"));
        final List<ProcessHandle> ranks = new ArrayList<>();
        try
        {
            assertTrue(launcher.reached.await(120, TimeUnit.SECONDS), launcher::output);
            launcher.process.descendants().forEach(ranks::add);
            assertEquals(1, ranks.size(), "one rank: " + ranks);
            launcher.process.destroyForcibly();
            assertTrue(launcher.process.waitFor(10, TimeUnit.SECONDS));
            for (final ProcessHandle rank : ranks)
            {
                // The rank stops itself at once; it halts 30 s later at the latest.
                rank.onExit().get(60, TimeUnit.SECONDS);
                assertFalse(rank.isAlive(), "rank " + rank.pid() + " outlived its launcher");
            }
        }
        finally
        {
            ranks.forEach(ProcessHandle::destroyForcibly);
        }
        assertTrue(Files.isRegularFile(exp.resolve("ckpt/ckpt_interrupt.pth.tar")),
            () -> "the stop saved its checkpoint:\n" + launcher.output() + "\nlog:\n" + logOf(exp));
        assertTrue(new com.fasterxml.jackson.databind.ObjectMapper().readTree(exp.resolve("summary.json").toFile())
            .get("interrupted").asBoolean(), "the summary says it was interrupted");
    }

    /**
     * A launcher stopped with SIGTERM stops its rank (which saves {@code ckpt_interrupt}), exits with the signal's
     * code without an error line of its own (it once printed "Shutdown in progress"), and leaves no folder of its
     * error files in the temporary folder.
     */
    @Test
    void aLauncherStoppedBySigtermShouldStopItsRanksAndCleanUp(@TempDir final Path dir) throws Exception
    {
        final Path exp = dir.resolve("job");
        final Path tmp = Files.createDirectories(dir.resolve("tmp"));
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.add(1, "-Djava.io.tmpdir=" + tmp);
        command.addAll(List.of("launch", "--nproc", "1", "--", "train", "--set", "exp_name=" + exp, "--set",
            "env.stop_value=1000", "--set", "pipeline.max_env_step=100000000"));
        final ChildJvm launcher = ChildJvm.start(0, new ProcessBuilder(command),
            line -> line.startsWith("[rank 0] env steps"));
        try
        {
            assertTrue(launcher.reached.await(120, TimeUnit.SECONDS), launcher::output);
            launcher.process.toHandle().destroy();
            assertTrue(launcher.process.waitFor(90, TimeUnit.SECONDS), launcher::output);
            assertEquals(128 + 15, launcher.process.exitValue(), launcher::output);
        }
        finally
        {
            launcher.process.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        assertFalse(launcher.output().contains("Shutdown in progress"), launcher::output);
        assertTrue(Files.isRegularFile(exp.resolve("ckpt/ckpt_interrupt.pth.tar")), launcher::output);
        try (java.util.stream.Stream<Path> left = Files.list(tmp))
        {
            assertEquals(List.of(), left.filter(f -> f.getFileName().toString().startsWith("ding4j-launch-"))
                .toList(), "the error files' folder is removed");
        }
    }
}
