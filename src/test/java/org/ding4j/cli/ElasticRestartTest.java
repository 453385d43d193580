package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.checkpoint.FolderLock;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ding4j launch --max-restarts 1} on the real two-rank CartPole job: one rank, chosen at random, is killed
 * with SIGKILL at a random update; the launcher stops the other, restarts both, they resume from the newest verified
 * checkpoint, and the job ends at the update count an uninterrupted run ends at, every checkpoint whole. One try by
 * default; {@code -Dding4j.test.restartTries=10} runs more (the seed of each try is printed). A rank stopped with
 * SIGSTOP instead is restarted after its peer's collective timeout.
 */
class ElasticRestartTest
{
    private static final int UPDATES = 300;
    private static final Pattern PROGRESS = Pattern.compile("^\\[rank 0\\] env steps +\\d+ \\| updates +(\\d+) ");

    @TempDir
    Path dir;

    @Test
    void aKilledRankShouldBeRestartedFromTheNewestVerifiedCheckpointAndEndAtTheSameUpdate() throws Exception
    {
        final int tries = Integer.getInteger("ding4j.test.restartTries", 1);
        final long seed = Long.getLong("ding4j.test.restartSeed", System.nanoTime());
        final Random random = new Random(seed);
        for (int t = 0; t < tries; t++)
        {
            final int victim = random.nextInt(2);
            // Progress lines come every 20 updates (eval_freq); checkpoints every 50.
            final int killAt = 20 * (2 + random.nextInt(12));
            System.out.printf("try %d (seed %d): SIGKILL to rank %d after update %d%n", t, seed, victim, killAt);
            tryOnce(Files.createDirectories(dir.resolve("try" + t)), victim, killAt, "KILL", 20,
                List.of("--set", "pipeline.warmup_updates=0"));
        }
    }

    /**
     * The same for TD3 and SAC (a restarted Pendulum job once started from update 0 and overwrote ckpt_best with an
     * untrained net): a rank killed with SIGKILL at a random update, both restarted from the newest verified
     * checkpoint, the job ending at the uninterrupted run's update count.
     */
    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void aKilledTd3OrSacRankShouldResumeFromTheNewestCheckpoint(final String algorithm) throws Exception
    {
        final long seed = Long.getLong("ding4j.test.restartSeed", System.nanoTime());
        final Random random = new Random(seed);
        final int victim = random.nextInt(2);
        final int killAt = 20 * (3 + random.nextInt(10));
        System.out.printf("%s (seed %d): SIGKILL to rank %d after update %d%n", algorithm, seed, victim, killAt);
        tryOnce(dir, victim, killAt, "KILL", 20, List.of("--config",
            Path.of("examples/pendulum_" + algorithm + ".yaml").toAbsolutePath().toString(), "--set",
            "policy.random_collect_size=200"));
    }

    /**
     * A rank stopped with SIGSTOP: its peer fails at the collective timeout, the launcher stops both (SIGTERM and
     * SIGCONT, so the stopped one need not wait for SIGKILL) and the restart finishes the job.
     */
    @Test
    void aHungRankShouldBeRestartedAfterTheTimeout() throws Exception
    {
        // 10 s: the timeout also bounds each attempt's rendezvous, which two loaded JVMs must reach within it.
        tryOnce(dir, 1, 100, "STOP", 10, List.of("--set", "pipeline.warmup_updates=0"));
    }

    /**
     * The last attempt's rank 0 killed outright writes no summary: the launcher adds that attempt to the one an
     * earlier attempt's rank 0 wrote (before, that summary stood as the job's end, the last failure missing).
     */
    @Test
    void theLastAttemptsFailureShouldReachTheSummaryThoughItsRankZeroWasKilled() throws Exception
    {
        final CountDownLatch restarted = new CountDownLatch(1);
        final CountDownLatch training = new CountDownLatch(1);
        final ChildJvm launcher = ChildJvm.start(0, new ProcessBuilder(launchCommand(dir, 20,
            List.of("--set", "pipeline.warmup_updates=0"))).directory(dir.toFile()), line -> {
                if (line.startsWith("ding4j launch: attempt 1: rank 0 is pid"))
                {
                    restarted.countDown();
                }
                else if (0 == restarted.getCount() && PROGRESS.matcher(line).find())
                {
                    training.countDown();
                }
                final Matcher m = PROGRESS.matcher(line);
                return m.find() && Long.parseLong(m.group(1)) >= 60;
            });
        try
        {
            assertTrue(launcher.reached.await(120, TimeUnit.SECONDS), launcher::output);
            signal(launcher, 0, 1, "KILL");
            assertTrue(training.await(120, TimeUnit.SECONDS), launcher::output);
            // Rank 1 stopped first, so that rank 0's end is surely the launcher's first news of this attempt (the
            // launcher resumes rank 1 as it stops it).
            signal(launcher, 1, 1, "STOP");
            signal(launcher, 1, 0, "KILL");
            assertNotEquals(0, launcher.await(180), launcher::output);
        }
        finally
        {
            launcher.process.destroyForcibly();
        }
        final JsonNode summary = new ObjectMapper().readTree(dir.resolve("exp/summary.json").toFile());
        final JsonNode elastic = summary.get("elastic");
        assertEquals(1, elastic.get("restart_count").asInt(), summary::toString);
        assertEquals(0, elastic.get("fields_from_attempt").asInt(), summary::toString);
        assertEquals(2, elastic.get("attempts").size(), summary::toString);
        assertEquals(0, elastic.get("attempts").get(1).get("failed_rank").asInt(), summary::toString);
        assertTrue(summary.get("error").asText().contains("rank 0 was ended by signal 9 (SIGKILL)"),
            summary::toString);
    }

    /**
     * A rank whose collective fails after rank 0 (the store's host) is gone says its own error in one line: c10d's
     * client, asked for a peer's failure report from the dead store, printed a warning with a C++ backtrace per
     * call first. Rank 1 is stopped while rank 0 is killed, and resumes (the launcher's SIGCONT) only once rank 0 is
     * reaped, so its store is surely gone when rank 1 asks.
     */
    @Test
    void aPeerOfADeadStoreHostShouldSayItsOwnErrorWithoutANativeBacktrace() throws Exception
    {
        final ChildJvm launcher = ChildJvm.start(0, new ProcessBuilder(launchCommand(dir, 20,
            List.of("--set", "pipeline.warmup_updates=0"))).directory(dir.toFile()), line -> {
                final Matcher m = PROGRESS.matcher(line);
                return m.find() && Long.parseLong(m.group(1)) >= 60;
            });
        try
        {
            assertTrue(launcher.reached.await(120, TimeUnit.SECONDS), launcher::output);
            signal(launcher, 0, 1, "STOP");
            signal(launcher, 0, 0, "KILL");
            assertEquals(0, launcher.await(180), launcher::output);
        }
        finally
        {
            launcher.process.destroyForcibly();
        }
        assertTrue(launcher.output().contains("[rank 1] ding4j: "), launcher::output);
        assertTrue(launcher.output().lines().noneMatch(l -> l.contains("frame #")), launcher::output);
    }

    private static void signal(final ChildJvm launcher, final int attempt, final int rank, final String signal)
        throws Exception
    {
        final String pidLine = launcher.firstLine(l -> l.startsWith("ding4j launch: attempt " + attempt + ": rank "
            + rank + " is pid "));
        assertEquals(0, new ProcessBuilder("kill", "-" + signal, pidLine.substring(pidLine.lastIndexOf(' ') + 1))
            .start().waitFor());
    }

    private static List<String> launchCommand(final Path work, final int timeoutS, final List<String> config)
    {
        final List<String> command = ChildJvm.javaCommand(work, Main.class.getName());
        command.addAll(List.of("launch", "--nproc", "2", "--max-restarts", "1", "--", "train",
            "--set", "exp_name=exp", "--set", "env.stop_value=1000000", "--set", "pipeline.max_train_iter=" + UPDATES,
            "--set", "learner.hook.save_ckpt_after_iter=50", "--set", "policy.eval.evaluator.eval_freq=20",
            "--set", "pipeline.dist_timeout_s=" + timeoutS));
        command.addAll(config);
        return command;
    }

    private void tryOnce(final Path work, final int victim, final int killAt, final String signal,
        final int timeoutS, final List<String> config) throws Exception
    {
        final List<String> command = launchCommand(work, timeoutS, config);
        double beforeRestart = Double.NaN;
        final CountDownLatch restarting = new CountDownLatch(1);
        final ChildJvm launcher = ChildJvm.start(0, new ProcessBuilder(command).directory(work.toFile()), line -> {
            if (line.startsWith("ding4j launch: restart 1 of at most 1"))
            {
                restarting.countDown();
            }
            final Matcher m = PROGRESS.matcher(line);
            return m.find() && Long.parseLong(m.group(1)) >= killAt;
        });
        try
        {
            assertTrue(launcher.reached.await(120, TimeUnit.SECONDS), launcher::output);
            final String pidLine = launcher.firstLine(l -> l.startsWith("ding4j launch: attempt 0: rank " + victim
                + " is pid "));
            final long pid = Long.parseLong(pidLine.substring(pidLine.lastIndexOf(' ') + 1));
            assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start().waitFor());
            // What the job's best was when it was killed (read before the restart's first evaluation can replace it).
            beforeRestart = Files.isRegularFile(work.resolve("exp/ckpt/ckpt_best.pth.tar"))
                ? bestReturn(work.resolve("exp/ckpt/ckpt_best.pth.tar")) : Double.NEGATIVE_INFINITY;
            // Between the attempts the launcher holds the folder: another job there (this test) is refused, naming
            // the launcher (before, the folder was free until the restart's rank 0 took it).
            assertTrue(restarting.await(120, TimeUnit.SECONDS), launcher::output);
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> FolderLock.acquire(work.resolve("exp")).close());
            assertTrue(refused.getMessage().contains("(pid " + launcher.process.pid() + ")"), refused::getMessage);
            assertEquals(0, launcher.await(180), launcher::output);
        }
        finally
        {
            launcher.process.destroyForcibly();
        }
        final JsonNode summary = new ObjectMapper().readTree(work.resolve("exp/summary.json").toFile());
        assertEquals(UPDATES, summary.get("train_iter").asLong(), "the job ends where an uninterrupted one does");
        final JsonNode elastic = summary.get("elastic");
        assertEquals(1, elastic.get("restart_count").asInt(), elastic::toString);
        final JsonNode attempt = elastic.get("attempts").get(0);
        if ("KILL".equals(signal))
        {
            assertEquals(victim, attempt.get("failed_rank").asInt(), elastic::toString);
            assertTrue(attempt.get("cause").asText().contains("signal 9 (SIGKILL)"), elastic::toString);
        }
        else
        {
            // The hung rank says nothing; its peer times out first and names the collective.
            assertEquals(1 - victim, attempt.get("failed_rank").asInt(), elastic::toString);
            assertTrue(attempt.get("cause").asText().contains("DistException"), elastic::toString);
            // The stopped rank is named, though it is not the one that failed (with or without restarts).
            assertTrue(launcher.output().contains("(rank(s) [" + victim + "] of this node stopped by a signal "
                + "(SIGSTOP) at the time); stopping the other ranks"), launcher::output);
            assertEquals(victim, attempt.get("stopped_ranks").get(0).asInt(), elastic::toString);
            assertTrue(attempt.get("cause").asText().contains("rank(s) [" + victim + "] of this node stopped by a "
                + "signal"), elastic::toString);
            assertTrue(attempt.get("stop_s").asDouble() < 20, "SIGCONT let the stopped rank take its SIGTERM: "
                + elastic);
        }
        // A surviving rank that fails at its next collective reports its update count; one the launcher stops first
        // (it was collecting or evaluating, no collective due) ends as interrupted and reports none: then null.
        final long reached = attempt.get("update_reached").isNull() ? killAt : attempt.get("update_reached").asLong();
        final long resumed = elastic.get("resumed_iter").asLong();
        // The first evaluation (update 0) saves ckpt_best, so a kill before update 50 may resume from update 0.
        assertTrue(reached >= killAt && resumed <= reached + 20 && resumed >= 0, elastic::toString);
        assertTrue(elastic.get("time_lost_s").asDouble() > 0, elastic::toString);
        assertEquals(0, elastic.get("refused_checkpoints").size(), elastic::toString);
        assertTrue(launcher.output().contains("restart 1 of at most 1"), launcher::output);
        assertEveryCheckpointWhole(work.resolve("exp/ckpt"));
        // ckpt_best is never worse after the restart: at least what it held when the rank was killed (a best that
        // came after the checkpoint the job resumed from included), and it is the summary's.
        final double finalBest = bestReturn(work.resolve("exp/ckpt/ckpt_best.pth.tar"));
        assertTrue(finalBest >= beforeRestart, finalBest + " < " + beforeRestart);
        assertEquals(summary.get("best_eval_return").asDouble(), finalBest, 0.0, summary::toString);
        System.out.printf("  SIG%s to rank %d, update %d reached; resumed from %s (update %d); %.2f s lost; ended at %d%n",
            signal, victim, reached, elastic.get("resumed_from").asText(), resumed, elastic.get("time_lost_s").asDouble(),
            summary.get("train_iter").asLong());
    }

    private static double bestReturn(final Path checkpoint) throws IOException
    {
        try (PointerScope scope = new PointerScope())
        {
            final Object pipeline = new TorchCheckpointIO().read(checkpoint).get("pipeline");
            return (Double)((java.util.Map<?, ?>)pipeline).get("best_eval_return");
        }
    }

    /** Nothing half-written: no temporary file is left and every checkpoint reads back with its CRCs. */
    private static void assertEveryCheckpointWhole(final Path ckpt) throws IOException
    {
        final List<Path> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(ckpt))
        {
            list.forEach(files::add);
        }
        assertFalse(files.isEmpty());
        final TorchCheckpointIO io = new TorchCheckpointIO();
        for (final Path file : files)
        {
            assertFalse(AtomicFiles.isTemporary(file), () -> "left half-written: " + file);
            try (PointerScope scope = new PointerScope())
            {
                assertTrue(io.read(file).containsKey("last_iter"), file::toString);
            }
        }
    }
}
