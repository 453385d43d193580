package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run that fails while training, through the command line as users run it: exit 1 (2 stays for bad arguments),
 * a message naming the cause, no stack trace on the console (a Pendulum failure once printed 24-43 lines of trace
 * before its message), the whole trace in the learner's log file, and {@code summary.json} with the error.
 */
class FailureOutputTest
{
    @TempDir
    Path dir;

    @Test
    void aTrainingFailureIsOneLineOnTheConsoleAndTheTraceIsInTheLogFile() throws Exception
    {
        final Path exp = dir.resolve("failing");
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.add(1, "-Dlogback.configurationFile=org/ding4j/cli/logback-cli.xml");
        command.addAll(List.of("train", "--config", Path.of("examples/pendulum_sac.yaml").toAbsolutePath().toString(),
            "--set", "exp_name=" + exp, "--set",
            "env.type=org.ding4j.rl.ac.ActorCriticTrainingTest$FailingPendulum"));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), output);
        assertEquals(1, child.exitValue(), output);
        assertEquals(1, output.lines().filter(line -> line.contains("the env broke at step 250")).count(), output);
        assertTrue(output.lines().noneMatch(line -> line.startsWith("\tat ") || line.startsWith("Caused by")),
            "no stack trace on the console:\n" + output);
        final String log = Files.readString(exp.resolve("log/learner/learner_logger.txt"));
        assertTrue(log.contains("the env broke at step 250") && log.contains("\tat "), log);
        assertTrue(Files.readString(exp.resolve("summary.json")).contains("the env broke at step 250"));
    }

    /**
     * A checkpoint to resume from that the run refuses is bad input, exit 2 as a bad key is, named in one line, and
     * nothing is written but the learner's config and log: one that does not fit (a model and nothing of a run's
     * state); one that is not there and one that is no checkpoint at all (a log file) are refused before the run
     * makes its folder.
     */
    @Test
    void aRefusedResumeIsBadInput() throws Exception
    {
        final Path file = dir.resolve("model_only.pth.tar");
        new org.ding4j.checkpoint.TorchCheckpointIO().write(file, java.util.Map.of("model", java.util.Map.of()));
        final String misfit = resume(file, "misfit");
        assertTrue(misfit.contains("ding4j: learner.hook.load_ckpt_before_run: checkpoint " + file
            + ": DQN state dict: its 'model' is another net's"), misfit);
        assertEquals(1, misfit.lines().filter(line -> line.contains("another net's")).count(), misfit);
        assertTrue(resume(dir.resolve("nowhere.pth.tar"), "missing").contains("ding4j: "
            + "learner.hook.load_ckpt_before_run: checkpoint " + dir.resolve("nowhere.pth.tar") + " does not exist"));
        assertFalse(Files.exists(dir.resolve("missing")));
        final Path text = Files.writeString(dir.resolve("learner_logger.txt"), "not a checkpoint\n");
        assertTrue(resume(text, "text").contains("ding4j: learner.hook.load_ckpt_before_run: checkpoint " + text
            + " is unusable: not a readable zip archive"));
        assertFalse(Files.exists(dir.resolve("text")));
    }

    /** @return the output of a train resuming from the file, which must exit 2 and write no checkpoint or summary */
    private String resume(final Path file, final String name) throws Exception
    {
        final Path exp = dir.resolve(name);
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.add(1, "-Dlogback.configurationFile=org/ding4j/cli/logback-cli.xml");
        command.addAll(List.of("train", "--set", "exp_name=" + exp, "--set", "learner.hook.load_ckpt_before_run="
            + file));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), output);
        assertEquals(Main.BAD_INPUT, child.exitValue(), output);
        assertTrue(!Files.exists(exp.resolve("summary.json")) && !Files.exists(exp.resolve("ckpt")), output);
        return output;
    }
}
