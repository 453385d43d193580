package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.List;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.rl.pipeline.Restarts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of its own never writes over an earlier run's folder (DI-engine's renew_dir); a job a launcher may restart
 * keeps its folder, and a restart resumes only from checkpoints its own job wrote there.
 */
class ExperimentFolderTest
{
    private static final LocalDateTime NOW = LocalDateTime.of(2026, 12, 7, 8, 30, 5);

    @TempDir
    Path dir;

    @Test
    void anEarlierRunsFolderIsRenewedAndAnEmptyOneUsed() throws Exception
    {
        final Path exp = dir.resolve("exp");
        assertEquals(exp.toString(), OffPolicyPipeline.runFolder(exp.toString(), NOW), "no folder yet");
        Files.createDirectories(exp.resolve("notes"));
        assertEquals(exp.toString(), OffPolicyPipeline.runFolder(exp.toString(), NOW), "a folder of other files");
        // The user's own config kept in the folder, by the name the run would write its learner config under.
        final Path mine = dir.resolve("mine");
        Files.createDirectories(mine);
        Files.writeString(mine.resolve("config.yaml"), "# my notes\n");
        assertEquals(dir.resolve("mine_261207_083005").toString(), OffPolicyPipeline.runFolder(mine.toString(), NOW));
        Files.createDirectories(exp.resolve("ckpt"));
        assertEquals(dir.resolve("exp_261207_083005").toString(),
            OffPolicyPipeline.runFolder(exp.toString(), NOW));
        Files.createDirectories(dir.resolve("exp_261207_083005"));
        Files.createDirectories(dir.resolve("exp_261207_083005_2"));
        assertEquals(dir.resolve("exp_261207_083005_3").toString(),
            OffPolicyPipeline.runFolder(exp.toString(), NOW),
            "two runs in one second");
    }

    @Test
    void aFileWhereTheFolderWouldBeIsNamedWithTheKey() throws Exception
    {
        final Path file = dir.resolve("notes.txt");
        Files.writeString(file, "mine\n");
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
            .with("exp_name", file.toString()).with("pipeline.max_env_step", 200L)).run(p -> { }));
        assertEquals("exp_name: cannot write the experiment folder " + file + ": something other than a folder is "
            + "there (" + file + ")", ex.getMessage());
        assertEquals("mine\n", Files.readString(file));
    }

    @Test
    void aSecondRunLeavesTheFirstOnesFilesAsTheyWere() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("twice").toString())
            .with("pipeline.max_env_step", 200L);
        assertNull(new OffPolicyPipeline(user).run(p -> { }).paths().get("renewed_from"));
        final Path first = dir.resolve("twice");
        final byte[] summary = Files.readAllBytes(first.resolve("summary.json"));
        final byte[] best = Files.readAllBytes(first.resolve("ckpt").resolve(OffPolicyPipeline.BEST_CHECKPOINT));
        final List<Path> before;
        try (var files = Files.walk(first))
        {
            before = files.toList();
        }

        final OffPolicyPipeline second = new OffPolicyPipeline(user);
        assertEquals(first.toString(), second.renewedFrom());
        final Path renewed = Path.of(second.config().getString("exp_name"));
        assertTrue(renewed.getFileName().toString().matches("twice_\\d{6}_\\d{6}"), renewed.toString());
        assertEquals(first.toString(), second.run(p -> { }).paths().get("renewed_from"));

        assertTrue(Files.isRegularFile(renewed.resolve("summary.json")), "the second run's summary is in its folder");
        assertTrue(Files.readString(renewed.resolve("summary.json")).contains("\"renewed_from\" : \"" + first + "\""));
        assertTrue(Files.readString(renewed.resolve("log/learner/learner_logger.txt")).contains("exp_name " + first
            + " holds an earlier run: this run writes " + renewed), "the run's log names both folders");
        assertArrayEquals(summary, Files.readAllBytes(first.resolve("summary.json")));
        assertArrayEquals(best, Files.readAllBytes(first.resolve("ckpt").resolve(OffPolicyPipeline.BEST_CHECKPOINT)));
        try (var files = Files.walk(first))
        {
            assertEquals(before, files.toList(), "nothing added to or removed from the first run's folder");
        }
    }

    @Test
    void aFolderAnotherRunTookSinceItWasChosenIsRenewedAgain() throws Exception
    {
        final Path exp = dir.resolve("together");
        final Config user = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_env_step", 200L);
        // Another run, started at the same moment, wrote the chosen folder first and has ended.
        final OffPolicyPipeline late = new OffPolicyPipeline(user);
        Files.createDirectories(exp);
        Files.writeString(exp.resolve("summary.json"), "{\"seed\": 1}");
        late.run(p -> { });
        assertEquals("{\"seed\": 1}", Files.readString(exp.resolve("summary.json")), "the other run's summary stays");
        final Path renewed = Path.of(late.config().getString("exp_name"));
        assertTrue(Files.isRegularFile(renewed.resolve("summary.json")), renewed.toString());
        assertEquals(exp.toString(), late.renewedFrom());

        // Another run holds the chosen folder still: this one neither waits nor is refused.
        final OffPolicyPipeline beside = new OffPolicyPipeline(user);
        final Path chosen = Path.of(beside.config().getString("exp_name"));
        Files.createDirectories(chosen);
        try (org.ding4j.checkpoint.FolderLock held = org.ding4j.checkpoint.FolderLock.acquire(chosen))
        {
            beside.run(p -> { });
        }
        final Path written = Path.of(beside.config().getString("exp_name"));
        assertTrue(!written.equals(chosen) && Files.isRegularFile(written.resolve("summary.json")), written.toString());
        assertTrue(!Files.exists(chosen.resolve("summary.json")), "nothing written into the held folder");

        // A fresh name whose holder has written nothing yet (two runs started together in one JVM) is renewed too.
        final Path fresh = dir.resolve("fresh");
        final OffPolicyPipeline second = new OffPolicyPipeline(user.with("exp_name", fresh.toString()));
        Files.createDirectories(fresh);
        try (org.ding4j.checkpoint.FolderLock held = org.ding4j.checkpoint.FolderLock.acquire(fresh))
        {
            second.run(p -> { });
        }
        final Path moved = Path.of(second.config().getString("exp_name"));
        assertTrue(moved.getFileName().toString().matches("fresh_\\d{6}_\\d{6}")
            && Files.isRegularFile(moved.resolve("summary.json")), moved.toString());
        assertEquals(fresh.toString(), second.renewedFrom());
        assertTrue(!Files.exists(fresh.resolve("summary.json")), "nothing written into the held folder");
    }

    @Test
    void aRestartedJobKeepsItsFolderAndResumesOnlyFromItsOwnCheckpoints() throws Exception
    {
        final Path exp = dir.resolve("y");
        final Config user = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 60L)
            .with("learner.hook.save_ckpt_after_iter", 20L).with("env.stop_value", 100000.0);
        new OffPolicyPipeline(user).run(p -> { });
        final Path earlier = exp.resolve("ckpt").resolve("iteration_60.pth.tar");
        assertTrue(Files.isRegularFile(earlier), "an earlier job's checkpoints");
        // Written a minute before the next job, as an earlier job's are: a file system that keeps whole seconds would
        // otherwise date them with the mark made a moment later.
        try (var files = Files.list(earlier.getParent()))
        {
            for (final Path file : files.toList())
            {
                Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(
                    Files.getLastModifiedTime(file).toMillis() - 60_000));
            }
        }

        final OffPolicyPipeline first = new OffPolicyPipeline(user, job("job-1"), new ElasticAttempt(0, 1, List.of(),
            null));
        assertEquals(exp.toString(), first.config().getString("exp_name"), "a restartable job keeps its folder");
        assertNull(first.renewedFrom());
        // Its first attempt marked the folder and failed before its first checkpoint.
        Restarts.markFolder(exp.toString(), "job-1");
        final ElasticAttempt restart = new ElasticAttempt(1, 1, List.of(), null);
        assertNull(Restarts.resumePoint(restart, exp.toString(), "job-1"), "the earlier job's are older");
        assertNull(Restarts.resumePoint(restart, exp.toString(), "job-2"), "a folder of another job's");
        assertEquals(earlier.getParent().resolve("iteration_60.pth.tar"),
            Restarts.resumePoint(restart, exp.toString(), "").file(), "a job without an id takes the newest");

        final OffPolicyRun.Summary summary = new OffPolicyPipeline(user.with("pipeline.max_train_iter", 20L),
            job("job-1/restart-1"), restart).run(p -> { });
        // Its summary lists the job's own checkpoints (the earlier job's iteration_40 and _60 are still there).
        assertTrue(Files.isRegularFile(earlier));
        assertEquals(List.of(earlier.resolveSibling("ckpt_best.pth.tar").toString(),
            earlier.resolveSibling("iteration_20.pth.tar").toString()), summary.paths().get("checkpoints"));
        final var resumed = Restarts.resumePoint(new ElasticAttempt(2, 2, List.of(), null), exp.toString(),
            "job-1");
        assertEquals(20, resumed.lastIter(), "the restart's own checkpoint, not the earlier job's iteration_60");
        assertEquals("job-1", Files.readString(exp.resolve(Restarts.JOB_FILE)).strip());
        // A config that names a file to start from (the earlier job's iteration_60) does not send a restart back to
        // it: the job's own newest checkpoint wins (before, the restart redid every update since the named file).
        final OffPolicyRun.Summary again = new OffPolicyPipeline(user.with("pipeline.max_train_iter", 30L)
            .with("learner.hook.load_ckpt_before_run", earlier.toString()), job("job-1/restart-2"),
            new ElasticAttempt(2, 2, List.of(), null)).run(p -> { });
        assertEquals(30, again.trainIter(), "resumed at update 20, not 60");
        assertTrue(Files.readString(exp.resolve("summary.json")).contains("\"resumed_iter\" : 20"),
            () -> exp.resolve("summary.json").toString());
    }

    @Test
    void aRestartMarkIsTakenOffTheJobIdOnly()
    {
        assertEquals("job-1", ElasticAttempt.jobOf(ElasticAttempt.attemptId("job-1", 3)));
        assertEquals("job-1", ElasticAttempt.jobOf(ElasticAttempt.attemptId("job-1", 0)));
        assertEquals("a/restart-x", ElasticAttempt.jobOf("a/restart-x"));
        assertEquals("a/restart-", ElasticAttempt.jobOf("a/restart-"));
    }

    @Test
    void aResumeAlreadyAtItsLimitsSaysSo() throws Exception
    {
        final Path exp = dir.resolve("limits");
        final Config user = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 20L)
            .with("env.stop_value", 100000.0);
        new OffPolicyPipeline(user).run(p -> { });
        final ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger)org.slf4j.LoggerFactory
            .getLogger(OffPolicyRun.class);
        final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
            new ch.qos.logback.core.read.ListAppender<>();
        seen.start();
        logger.addAppender(seen);
        try
        {
            final OffPolicyRun.Summary again = new OffPolicyPipeline(user.with("learner.hook.load_ckpt_before_run",
                exp.resolve("ckpt/iteration_20.pth.tar").toString())).run(p -> { });
            assertEquals(20, again.trainIter(), "no update ran");
            // The env step limit: the resumed run still collects one round and trains its updates.
            final long steps = (Long)new org.ding4j.checkpoint.TorchCheckpointIO().read(
                exp.resolve("ckpt/iteration_20.pth.tar")).get("last_step");
            new OffPolicyPipeline(user.with("pipeline.max_train_iter", 1000L).with("pipeline.max_env_step", steps)
                .with("learner.hook.load_ckpt_before_run", exp.resolve("ckpt/iteration_20.pth.tar").toString()))
                .run(p -> { });
        }
        finally
        {
            logger.detachAppender(seen);
        }
        assertEquals(2, seen.list.size(), seen.list.toString());
        assertTrue(seen.list.get(0).getFormattedMessage().contains("is at update 20, already at "
            + "pipeline.max_train_iter 20"), seen.list.get(0).getFormattedMessage());
        assertTrue(seen.list.get(1).getFormattedMessage().contains("already at pipeline.max_env_step"),
            seen.list.get(1).getFormattedMessage());
    }

    @Test
    void aMistypedResumeIsRefusedBeforeAnythingIsWritten()
    {
        final Path exp = dir.resolve("resume");
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
            .with("exp_name", exp.toString())
            .with("learner.hook.load_ckpt_before_run", dir.resolve("nope.pth.tar").toString())));
        assertEquals("learner.hook.load_ckpt_before_run: checkpoint " + dir.resolve("nope.pth.tar") + " does not exist",
            ex.getMessage());
        assertTrue(!Files.exists(exp), "nothing written");
    }

    private static DistInfo job(final String id)
    {
        return new DistInfo(0, 1, 0, DistInfo.DEFAULT_MASTER_ADDR, DistInfo.DEFAULT_MASTER_PORT, id);
    }

    @Test
    void aJobWithoutAnIdKeepsItsFolder() throws Exception
    {
        final Path exp = dir.resolve("elastic");
        Files.createDirectories(exp.resolve("ckpt"));
        final Config user = Config.empty().with("exp_name", exp.toString());
        final OffPolicyPipeline restartable = new OffPolicyPipeline(user, DistInfo.single(),
            new ElasticAttempt(0, 2, List.of(), null));
        assertEquals(exp.toString(), restartable.config().getString("exp_name"));
        assertNull(restartable.renewedFrom());
        assertEquals(exp.toString(), OffPolicyPipeline.forEvaluation(user).config().getString("exp_name"),
            "an evaluation writes nothing, so it renews nothing");
    }
}
