package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ding4j train} stopped by SIGTERM at any moment ends cleanly: during start-up (before any update) and twice
 * in a row mid-run, it exits 0 with {@code summary.json} saying it was interrupted and an interrupt checkpoint that
 * counts every update.
 */
class SignalsAtAnyMomentTest
{
    @TempDir
    Path dir;

    private ChildJvm train(final String exp, final String milestone, final String... sets) throws Exception
    {
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.addAll(List.of("train", "--set", "exp_name=" + dir.resolve(exp), "--set", "env.stop_value=100000",
            "--set", "pipeline.warmup_updates=50"));
        for (final String set : sets)
        {
            command.addAll(List.of("--set", set));
        }
        return ChildJvm.start(0, new ProcessBuilder(command), line -> line.startsWith(milestone));
    }

    private Map<?, ?> summary(final String exp) throws Exception
    {
        return new ObjectMapper().readValue(Files.readAllBytes(dir.resolve(exp).resolve("summary.json")), Map.class);
    }

    @Test
    void aSignalDuringStartUpShouldEndTheRunWithASummary() throws Exception
    {
        final ChildJvm child = train("startup", "ding4j train: starting");
        assertTrue(child.reached.await(60, TimeUnit.SECONDS), "the first line comes at once");
        child.process.toHandle().destroy();
        assertTrue(child.process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, child.process.exitValue());
        final Map<?, ?> summary = summary("startup");
        assertEquals(true, summary.get("interrupted"));
        assertEquals(0, summary.get("train_iter"));
    }

    /**
     * A signal ends a phase that would run for hours: the first evaluation of 10,000 episodes of up to 10,000 steps
     * (DQN), and a random collection of 2e9 steps (TD3). Each stops at once, the run ends interrupted with its
     * summary, exit 0 (both once ran to their ends first).
     */
    @ParameterizedTest
    @ValueSource(strings = {"evaluation", "collection"})
    void aSignalShouldCutALongPhaseShort(final String phase) throws Exception
    {
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.addAll(List.of("train", "--set", "exp_name=" + dir.resolve(phase), "--set", "env.stop_value=100000"));
        if ("evaluation".equals(phase))
        {
            command.addAll(List.of("--set", "env.n_evaluator_episode=10000", "--set", "env.max_episode_steps=10000"));
        }
        else
        {
            command.addAll(List.of("--config", java.nio.file.Path.of("examples/pendulum_td3.yaml").toAbsolutePath()
                .toString(), "--set", "policy.random_collect_size=2000000000"));
        }
        // The line before the run: the signal comes during set-up or the phase itself; either must end it.
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> line.startsWith("ding4j train: "
            + dir.resolve(phase)));
        assertTrue(child.reached.await(60, TimeUnit.SECONDS), child::output);
        child.process.toHandle().destroy();
        assertTrue(child.process.waitFor(60, TimeUnit.SECONDS), "the " + phase + " was cut short: " + child.output());
        assertEquals(0, child.process.exitValue(), child::output);
        assertEquals(true, summary(phase).get("interrupted"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"serial", "parallel"})
    void twoSignalsMidRunShouldStillWriteTheSummaryAndTheInterruptCheckpoint(final String mode) throws Exception
    {
        final ChildJvm child = train("twice", "env steps", "pipeline.mode=" + mode);
        assertTrue(child.reached.await(60, TimeUnit.SECONDS), "training started");
        child.process.toHandle().destroy();
        child.process.toHandle().destroy();
        assertTrue(child.process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, child.process.exitValue());
        final Map<?, ?> summary = summary("twice");
        assertEquals(true, summary.get("interrupted"), "in " + mode + " mode too");
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> ckpt = new TorchCheckpointIO().read(dir.resolve("twice/ckpt/ckpt_interrupt.pth.tar"));
            assertEquals(((Number)summary.get("train_iter")).longValue(), ckpt.get("last_iter"),
                "the interrupt checkpoint holds every update the summary counts");
        }
    }
}
