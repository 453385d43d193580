package org.ding4j.rl.pipeline;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.LearnerCheckpoints;

/**
 * The resume of a job a launcher restarts ({@code ding4j launch --max-restarts N}), the same for every algorithm: a
 * restarted attempt resumes from the newest checkpoint of the experiment's {@code ckpt} folder that reads back whole
 * (its job's, see below; where there is none, from {@code learner.hook.load_ckpt_before_run} as the first attempt
 * did), and {@code summary.json} records the attempts.
 * <p>
 * Such a job keeps its folder, which may hold an earlier job's checkpoints: rank 0 marks the folder with the job's
 * id when it takes it ({@value #JOB_FILE}, before any checkpoint of the job's), and a restart takes only checkpoints
 * written since the mark of its own job; a folder marked for another job, or not at all, holds none of its own (its
 * first attempt failed before the mark). The id names the job: jobs that reuse one (a fixed {@code --job-id},
 * torchrun's default {@code none}) count as one, and a job without an id resumes from the newest checkpoint there,
 * whoever wrote it.
 */
public final class Restarts
{
    /** The file that names the job whose checkpoints a folder holds (its modification time: since when). */
    public static final String JOB_FILE = ".ding4j-job";

    private Restarts()
    {
    }

    /**
     * Marks a folder as the job's, once (an attempt of the same job leaves the mark and its time as they are).
     *
     * @param exp the experiment folder
     * @param job the job's id; empty: a run of its own, which removes a job's mark
     * @throws IOException if the mark cannot be written
     */
    public static void markFolder(final String exp, final String job) throws IOException
    {
        if (job.isEmpty())
        {
            // A run of its own in a folder a job marked (its rendezvous failed before it wrote a thing): the folder
            // is no longer that job's, and a restart of a job by that id must not take this run's checkpoints.
            Files.deleteIfExists(Path.of(exp, JOB_FILE));
        }
        else if (!job.equals(markOf(Path.of(exp))))
        {
            AtomicFiles.write(Path.of(exp, JOB_FILE), (job + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    /** @return the job id a folder is marked with, empty if none or unreadable */
    private static String markOf(final Path folder)
    {
        try
        {
            // A FileInputStream: a channel an interrupt of this thread closed would read as no mark, and the mark be
            // written again, newer than the job's own checkpoints.
            try (java.io.InputStream in = new java.io.FileInputStream(folder.resolve(JOB_FILE).toFile()))
            {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            }
        }
        catch (final IOException ex)
        {
            return "";
        }
    }

    /**
     * A restart resumes from its job's newest checkpoint even where the user named one to start from
     * ({@code learner.hook.load_ckpt_before_run}): that file is the job's start, and resuming from it again redid
     * every update since and wrote the job's later checkpoints over.
     *
     * @param attempt which attempt this is
     * @param exp     the experiment folder
     * @param job     the job's id ({@link ElasticAttempt#jobOf}), empty if it has none
     * @return the checkpoint a restarted attempt resumes from; null for a first attempt or a restart that finds no
     *     verified checkpoint of its job (it starts as the first attempt did, from the named file if there is one)
     * @throws IOException if the folder cannot be listed
     */
    public static LearnerCheckpoints.Verified resumePoint(final ElasticAttempt attempt, final String exp,
        final String job) throws IOException
    {
        if (!attempt.restarted())
        {
            return null;
        }
        final Path dir = LearnerCheckpoints.folder(exp, "learner");
        if (job.isEmpty())
        {
            return LearnerCheckpoints.newestVerified(dir, new TorchCheckpointIO()).orElse(null);
        }
        final FileTime since = markedSince(exp, job);
        return null == since ? null
            : LearnerCheckpoints.newestVerified(dir, new TorchCheckpointIO(), since).orElse(null);
    }

    /**
     * @param exp the experiment folder
     * @param job the job's id ({@link ElasticAttempt#jobOf}), empty if it has none
     * @return since when the folder is the job's (its checkpoints are those written since), or null when the job
     *     has no id or the folder is not marked with it (not a launched job's, or its mark was never written)
     * @throws IOException if the mark's time cannot be read
     */
    public static FileTime markedSince(final String exp, final String job) throws IOException
    {
        return job.isEmpty() || !job.equals(markOf(Path.of(exp))) ? null
            : Files.getLastModifiedTime(Path.of(exp, JOB_FILE));
    }

    /**
     * Adds a job's last failed attempt, the one no restart followed, to its {@code summary.json}: rank 0 writes the
     * summary, but cannot list its own attempt's failure, and a rank 0 killed outright (SIGKILL) wrote none, which
     * left the summary of an earlier attempt as if it were the job's end. {@code elastic.attempts} then lists every
     * failed attempt, {@code error} names the last one's cause, and {@code elastic.fields_from_attempt} says which
     * attempt the run's other fields come from (null where no rank 0 of the job wrote a summary: then it holds
     * only those two). Only in a folder marked with the job's id ({@link #markFolder}); a summary there from before
     * the mark (an earlier run's) counts as none, as rank 0's own would have replaced it.
     *
     * @param folder   the job's output folder
     * @param job      the job's id
     * @param attempts every failed attempt's record, the last included, oldest first
     * @return whether the summary was written (false: the folder is not marked as the job's)
     * @throws IOException if it cannot be written
     */
    public static boolean recordLastFailure(final Path folder, final String job,
        final List<Map<String, Object>> attempts) throws IOException
    {
        final Path file = folder.resolve("summary.json");
        final FileTime since = markedSince(folder.toString(), job);
        if (null == since)
        {
            return false;
        }
        final Map<String, Object> summary;
        if (!Files.isRegularFile(file) || Files.getLastModifiedTime(file).compareTo(since) < 0)
        {
            // No rank 0 of the job wrote one (each was killed outright): the attempts are all there is to say.
            summary = new LinkedHashMap<>();
        }
        else
        {
            try
            {
                summary = new ObjectMapper().readValue(file.toFile(),
                    new TypeReference<LinkedHashMap<String, Object>>()
                    {
                    });
            }
            catch (final IOException ex)
            {
                return false;
            }
        }
        final Object section = summary.get("elastic");
        @SuppressWarnings("unchecked")
        final Map<String, Object> elastic = section instanceof Map<?, ?> map ? (Map<String, Object>)map
            : new LinkedHashMap<>();
        final Map<String, Object> last = attempts.get(attempts.size() - 1);
        final Object written = summary.isEmpty() ? null : elastic.getOrDefault("restart_count", 0);
        elastic.put("fields_from_attempt", written);
        elastic.put("restart_count", last.get("attempt"));
        elastic.put("attempts", attempts);
        summary.put("elastic", elastic);
        summary.put("error", last.get("cause"));
        SummaryFile.writeJson(summary, file);
        return true;
    }

    /**
     * What {@code summary.json} says of the attempts, logged by the learner too: the failed attempts as the
     * launcher recorded them, the checkpoint this one resumed from and the time lost, from that checkpoint's write
     * to training again now (updates redone, the failure's detection, the restart and the rendezvous).
     *
     * @param attempt which attempt this is
     * @param resume  what it resumed from ({@link #resumePoint}), or null
     * @param learner the learner, for the log line
     * @return the {@code elastic} section, or null for a job that is not restarted
     * @throws IOException if the checkpoint's time cannot be read
     */
    public static Map<String, Object> summary(final ElasticAttempt attempt, final LearnerCheckpoints.Verified resume,
        final BaseLearner<?> learner) throws IOException
    {
        if (0 == attempt.maxRestarts() && !attempt.restarted())
        {
            return null;
        }
        final Map<String, Object> elastic = new LinkedHashMap<>();
        elastic.put("restart_count", attempt.restartCount());
        elastic.put("max_restarts", attempt.maxRestarts());
        elastic.put("attempts", attempt.previous());
        if (attempt.restarted())
        {
            elastic.put("resumed_from", null == resume ? null : resume.file().toString());
            elastic.put("resumed_iter", null == resume ? 0 : resume.lastIter());
            elastic.put("refused_checkpoints", null == resume ? List.of() : resume.refused());
            elastic.put("time_lost_s", null == resume ? null : (System.currentTimeMillis()
                - Files.getLastModifiedTime(resume.file()).toMillis()) / 1e3);
            learner.info("restart " + attempt.restartCount() + " of at most " + attempt.maxRestarts() + ": "
                + (null == resume ? "no verified checkpoint of this job, starting afresh"
                : "resumed from " + resume.file() + " after " + resume.lastIter() + " updates"
                + (resume.refused().isEmpty() ? "" : "; refused " + resume.refused())));
        }
        return elastic;
    }
}
