package org.ding4j.rl.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A job's mark on its folder and the launcher's last word in its summary, on real files. */
class RestartsTest
{
    @TempDir
    Path dir;

    private static Map<String, Object> attempt(final int number, final String cause)
    {
        return Map.of("attempt", number, "cause", cause);
    }

    /**
     * A run of its own in a folder a job marked (the job's rendezvous failed before it wrote anything) removes the
     * mark: a later restart of a job by that id took the run's checkpoints for its own.
     */
    @Test
    void aRunOfItsOwnShouldRemoveAJobsMark() throws Exception
    {
        Restarts.markFolder(dir.toString(), "A");
        assertNotNull(Restarts.markedSince(dir.toString(), "A"));
        Restarts.markFolder(dir.toString(), "");
        assertNull(Restarts.markedSince(dir.toString(), "A"));
        assertFalse(Files.exists(dir.resolve(Restarts.JOB_FILE)));
    }

    @Test
    void theLastFailureShouldBeAddedOnlyToTheJobsOwnFolder() throws Exception
    {
        final ObjectMapper json = new ObjectMapper();
        // Marked for another job: its summary is not touched.
        Restarts.markFolder(dir.toString(), "other");
        final byte[] theirs = "{\"train_iter\": 7}".getBytes(StandardCharsets.UTF_8);
        Files.write(dir.resolve("summary.json"), theirs);
        assertFalse(Restarts.recordLastFailure(dir, "job", List.of(attempt(0, "rank 0 was ended by signal 9"))));
        assertArrayEquals(theirs, Files.readAllBytes(dir.resolve("summary.json")));

        // The job's folder, whose every rank 0 was killed outright: a summary of the attempts alone, the earlier
        // run's summary (older than the job's mark) counting as none.
        Files.delete(dir.resolve(Restarts.JOB_FILE));
        Files.setLastModifiedTime(dir.resolve("summary.json"), java.nio.file.attribute.FileTime.fromMillis(0));
        Restarts.markFolder(dir.toString(), "job");
        assertTrue(Restarts.recordLastFailure(dir, "job", List.of(attempt(0, "first"), attempt(1, "second"))));
        JsonNode summary = json.readTree(dir.resolve("summary.json").toFile());
        assertEquals("second", summary.get("error").asText(), summary::toString);
        assertTrue(summary.get("elastic").get("fields_from_attempt").isNull(), summary::toString);
        assertEquals(1, summary.get("elastic").get("restart_count").asInt(), summary::toString);
        assertEquals(2, summary.get("elastic").get("attempts").size(), summary::toString);
        assertFalse(summary.has("train_iter"), summary::toString);

        // Rank 0 of attempt 0 wrote one: its fields stay, the attempt they come from is named.
        Files.writeString(dir.resolve("summary.json"), "{\"train_iter\": 180, \"elastic\": {\"restart_count\": 0, "
            + "\"attempts\": []}}");
        assertTrue(Restarts.recordLastFailure(dir, "job", List.of(attempt(0, "first"), attempt(1, "second"))));
        summary = json.readTree(dir.resolve("summary.json").toFile());
        assertEquals(180, summary.get("train_iter").asInt(), summary::toString);
        assertEquals(0, summary.get("elastic").get("fields_from_attempt").asInt(), summary::toString);
        assertEquals("second", summary.get("error").asText(), summary::toString);
    }
}
