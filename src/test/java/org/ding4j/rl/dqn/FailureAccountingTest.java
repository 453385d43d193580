package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run whose writes fail says which file failed and how, still writes {@code summary.json} with the error, and
 * leaves no temporary files; temporary files an earlier crash left are removed at the next start and never listed
 * as checkpoints. The disk-full case runs on a small tmpfs where this machine lets the test mount one.
 */
class FailureAccountingTest
{
    @TempDir
    Path dir;

    private static Config run(final Path exp)
    {
        return Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 60L)
            .with("pipeline.warmup_updates", 0L).with("env.stop_value", 100000.0);
    }

    /**
     * A job a launcher may restart: it keeps its folder, whose earlier files are the case under test (a fresh job
     * would write a renewed folder beside them).
     */
    private static OffPolicyPipeline restartable(final Path exp)
    {
        return new OffPolicyPipeline(run(exp), DistInfo.single(), new ElasticAttempt(0, 1, List.of(), null));
    }

    private static Map<?, ?> summary(final Path exp) throws Exception
    {
        return new ObjectMapper().readValue(Files.readAllBytes(exp.resolve("summary.json")), Map.class);
    }

    private static long temporaries(final Path folder) throws Exception
    {
        if (!Files.isDirectory(folder))
        {
            return 0;
        }
        try (Stream<Path> files = Files.list(folder))
        {
            return files.filter(AtomicFiles::isTemporary).count();
        }
    }

    @Test
    void aFailedSaveShouldNameTheFileAndStillWriteTheSummary() throws Exception
    {
        final Path exp = dir.resolve("blocked");
        Files.createDirectories(exp);
        // The checkpoint folder's name is taken by a file: every checkpoint write fails.
        Files.writeString(exp.resolve("ckpt"), "not a folder");
        final RuntimeException ex = assertThrows(RuntimeException.class,
            () -> restartable(exp).run(p -> { }, Map.of()));
        assertTrue(ex.getMessage().contains(exp.resolve("ckpt").toString()), ex.getMessage());
        final Map<?, ?> summary = summary(exp);
        assertTrue(String.valueOf(summary.get("error")).contains("ckpt_best.pth.tar"), summary::toString);
        assertEquals(false, summary.get("solved"));
    }

    @Test
    void staleTemporariesShouldBeRemovedAndNeverListed() throws Exception
    {
        final Path exp = dir.resolve("stale");
        final Path ckpt = Files.createDirectories(exp.resolve("ckpt"));
        final Path stale = Files.writeString(ckpt.resolve(".iteration_5.pth.tar.99999999-123456.tmp"), "half",
            StandardCharsets.UTF_8);
        final OffPolicyRun.Summary summary = restartable(exp).run(p -> { }, Map.of());
        assertFalse(Files.exists(stale), "removed at start");
        assertTrue(summary.paths().get("checkpoints").toString().contains("iteration_60.pth.tar"));
        assertFalse(summary.paths().get("checkpoints").toString().contains(".tmp"), summary.paths()::toString);
    }

    @Test
    void aFullDiskShouldNameTheFileKeepGoodFilesAndLeaveNoTemporaries() throws Exception
    {
        final Path mount = Files.createDirectories(dir.resolve("small"));
        final Process mounting = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs",
            mount.toString()).redirectErrorStream(true).start();
        final String why = new String(mounting.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(mounting.waitFor(10, TimeUnit.SECONDS) && 0 == mounting.exitValue(),
            "a 512 KiB tmpfs cannot be mounted here (" + why.trim() + "); the disk-full case is not run");
        try
        {
            final Path exp = mount.resolve("run");
            final RuntimeException ex = assertThrows(RuntimeException.class,
                () -> new OffPolicyPipeline(run(exp)).run(p -> { }, Map.of()));
            assertTrue(ex.getMessage().contains("cannot write " + exp.resolve("ckpt").toAbsolutePath()),
                ex.getMessage());
            assertEquals(0, temporaries(exp.resolve("ckpt")), "the failed write's temporary file is gone");
            assertTrue(String.valueOf(summary(exp).get("error")).contains("No space left on device"),
                "summary.json records the failure");
        }
        finally
        {
            new ProcessBuilder("umount", mount.toString()).start().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
