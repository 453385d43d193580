package org.ding4j.example;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run never writes over an earlier run's folder (DI-engine's renew_dir); the attempts of a job a launcher may restart
 * share one folder, named by the job's id.
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
        assertEquals(exp.toString(), OffPolicyPipeline.runFolder(exp.toString(), null, NOW), "no folder yet");
        Files.createDirectories(exp.resolve("notes"));
        assertEquals(exp.toString(), OffPolicyPipeline.runFolder(exp.toString(), null, NOW), "a folder of other files");
        Files.createDirectories(exp.resolve("ckpt"));
        assertEquals(dir.resolve("exp_261207_083005").toString(),
            OffPolicyPipeline.runFolder(exp.toString(), null, NOW));
        Files.createDirectories(dir.resolve("exp_261207_083005"));
        Files.createDirectories(dir.resolve("exp_261207_083005_2"));
        assertEquals(dir.resolve("exp_261207_083005_3").toString(),
            OffPolicyPipeline.runFolder(exp.toString(), null, NOW),
            "two runs in one second");
    }

    @Test
    void aSecondRunLeavesTheFirstOnesFilesAsTheyWere() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("twice").toString())
            .with("pipeline.max_env_step", 200L);
        new OffPolicyPipeline(user).run(p -> { });
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
        second.run(p -> { });

        assertTrue(Files.isRegularFile(renewed.resolve("summary.json")), "the second run's summary is in its folder");
        assertArrayEquals(summary, Files.readAllBytes(first.resolve("summary.json")));
        assertArrayEquals(best, Files.readAllBytes(first.resolve("ckpt").resolve(OffPolicyPipeline.BEST_CHECKPOINT)));
        try (var files = Files.walk(first))
        {
            assertEquals(before, files.toList(), "nothing added to or removed from the first run's folder");
        }
    }

    @Test
    void aJobsAttemptsShareTheFolderNamedByItsIdAndNeverResumeFromAnotherJobs() throws Exception
    {
        final Path exp = dir.resolve("y");
        final Config user = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_env_step", 200L);
        new OffPolicyPipeline(user).run(p -> { });
        final byte[] earlier = Files.readAllBytes(exp.resolve("summary.json"));

        final OffPolicyPipeline first = new OffPolicyPipeline(user, job("job-1"), new ElasticAttempt(0, 1, List.of(),
            null));
        final Path own = dir.resolve("y_job-1");
        assertEquals(own.toString(), first.config().getString("exp_name"));
        first.run(p -> { });
        assertEquals("job-1", Files.readString(own.resolve(".ding4j-job")).strip());
        assertArrayEquals(earlier, Files.readAllBytes(exp.resolve("summary.json")), "the earlier run's is kept");

        final OffPolicyPipeline restarted = new OffPolicyPipeline(user, job("job-1/restart-1"),
            new ElasticAttempt(1, 1, List.of(), null));
        assertEquals(own.toString(), restarted.config().getString("exp_name"), "a restart comes back to its folder");
        assertEquals(dir.resolve("y_job-2").toString(), new OffPolicyPipeline(user, job("job-2"),
            new ElasticAttempt(0, 1, List.of(), null)).config().getString("exp_name"), "another job: its own folder");
        assertEquals(own.toString(), new OffPolicyPipeline(user.with("exp_name", own.toString()), job("job-1"),
            new ElasticAttempt(1, 1, List.of(), null)).config().getString("exp_name"), "the job's own folder is kept");

        Files.writeString(own.resolve(".ding4j-job"), "job-9\n");
        final ConfigException taken = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(user,
            job("job-1"), new ElasticAttempt(0, 1, List.of(), null)));
        assertEquals("exp_name: " + exp + " and " + own + " hold other jobs' runs (job id job-1): give another "
            + "exp_name or job id", taken.getMessage());
    }

    @Test
    void aMistypedResumeIsRefusedBeforeAnythingIsWritten()
    {
        final Path exp = dir.resolve("resume");
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
            .with("exp_name", exp.toString())
            .with("learner.hook.load_ckpt_before_run", dir.resolve("nope.pth.tar").toString())));
        assertEquals("learner.hook.load_ckpt_before_run: checkpoint " + dir.resolve("nope.pth.tar") + " does not exist "
            + "or is not a regular file", ex.getMessage());
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
