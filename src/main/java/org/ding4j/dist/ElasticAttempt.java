package org.ding4j.dist;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.ding4j.checkpoint.AtomicFiles;

/**
 * This rank's attempt of a job whose launcher restarts every rank when one fails ({@code ding4j launch
 * --max-restarts N}, torchrun's elastic agent): which attempt it is, what ended the earlier ones, and where to
 * leave this attempt's failure for the launcher. The variables are torchrun's ({@value #RESTART_COUNT_VARIABLE},
 * {@value #MAX_RESTARTS_VARIABLE}, {@value #ERROR_FILE_VARIABLE}, whose JSON has torchrun's shape so that torchrun
 * itself can report a ding4j rank's failure) plus {@value #ATTEMPTS_VARIABLE}, the launcher's record of the failed
 * attempts, which rank 0 copies into its summary. A restarted attempt resumes from the newest verified checkpoint;
 * the pipeline decides that ({@code OffPolicyPipeline}), this record only says that it is one.
 *
 * @param restartCount how many times the job was restarted before this attempt (0: the first attempt)
 * @param maxRestarts  how many restarts the launcher allows
 * @param previous     one record per failed attempt, oldest first (attempt, cause, failed_rank, exit_code,
 *                     update_reached, ran_s, stop_s, stopped_ranks)
 * @param errorFile    where this rank writes its failure, or null when no launcher asked for it
 * @param folderFile   where rank 0 names the job's output folder for its launcher ({@value #FOLDER_FILE_VARIABLE}),
 *                     or null: the launcher holds the folder's lock from rank 0's end to the job's, so that no other
 *                     job takes the folder between an attempt and its restart
 * @param folderHolder the process (the launcher) that holds the folder's lock for this attempt, 0 for none
 *                     ({@value #FOLDER_HOLDER_VARIABLE}): rank 0 then writes the folder without a lock of its own
 */
public record ElasticAttempt(int restartCount, int maxRestarts, List<Map<String, Object>> previous, Path errorFile,
    Path folderFile, long folderHolder)
{
    /** torchrun's count of restarts before this attempt. */
    public static final String RESTART_COUNT_VARIABLE = "TORCHELASTIC_RESTART_COUNT";
    /** torchrun's {@code --max-restarts}. */
    public static final String MAX_RESTARTS_VARIABLE = "TORCHELASTIC_MAX_RESTARTS";
    /** torchrun's per-rank error file: a failing rank writes its exception there as JSON. */
    public static final String ERROR_FILE_VARIABLE = "TORCHELASTIC_ERROR_FILE";
    /** What {@link #attemptId} puts between a job's id and a restart's number. */
    public static final String RESTART_MARK = "/restart-";
    /** ding4j's launcher: a JSON list of the failed attempts before this one. */
    public static final String ATTEMPTS_VARIABLE = "DING4J_ATTEMPTS";
    /** ding4j's launcher: the file rank 0 names the job's output folder in. */
    public static final String FOLDER_FILE_VARIABLE = "DING4J_FOLDER_FILE";
    /** ding4j's launcher: its process id when it holds the job's folder for this attempt. */
    public static final String FOLDER_HOLDER_VARIABLE = "DING4J_FOLDER_HOLDER";

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @param restartCount restarts before this attempt (>= 0)
     * @param maxRestarts  restarts allowed (>= 0)
     * @param previous     the failed attempts' records
     * @param errorFile    this rank's error file, or null
     */
    public ElasticAttempt
    {
        if (restartCount < 0 || maxRestarts < 0 || folderHolder < 0)
        {
            throw new IllegalArgumentException(RESTART_COUNT_VARIABLE + ", " + MAX_RESTARTS_VARIABLE + ", "
                + FOLDER_HOLDER_VARIABLE + ": expected integers >= 0, got " + restartCount + ", " + maxRestarts
                + " and " + folderHolder);
        }
        previous = List.copyOf(Objects.requireNonNull(previous, "previous"));
    }

    /**
     * An attempt whose launcher neither learns the job's folder nor holds it (a launcher other than ding4j's).
     *
     * @param restartCount restarts before this attempt (>= 0)
     * @param maxRestarts  restarts allowed (>= 0)
     * @param previous     the failed attempts' records
     * @param errorFile    this rank's error file, or null
     */
    public ElasticAttempt(final int restartCount, final int maxRestarts, final List<Map<String, Object>> previous,
        final Path errorFile)
    {
        this(restartCount, maxRestarts, previous, errorFile, null, 0);
    }

    /** @return the first attempt of a job nobody restarts */
    public static ElasticAttempt first()
    {
        return new ElasticAttempt(0, 0, List.of(), null);
    }

    /**
     * @param environment the process environment
     * @return the attempt it describes; {@link #first()}'s values for absent variables
     * @throws IllegalArgumentException naming the variable that does not parse
     */
    public static ElasticAttempt fromEnvironment(final Map<String, String> environment)
    {
        final String attempts = environment.get(ATTEMPTS_VARIABLE);
        List<Map<String, Object>> previous = List.of();
        if (null != attempts && !attempts.isBlank())
        {
            try
            {
                previous = JSON.readValue(attempts, new TypeReference<List<Map<String, Object>>>()
                {
                });
            }
            catch (final IOException ex)
            {
                throw new IllegalArgumentException(ATTEMPTS_VARIABLE + ": expected a JSON list of attempt records, got "
                    + attempts, ex);
            }
        }
        return new ElasticAttempt((int)count(environment, RESTART_COUNT_VARIABLE, Integer.MAX_VALUE),
            (int)count(environment, MAX_RESTARTS_VARIABLE, Integer.MAX_VALUE), previous,
            path(environment, ERROR_FILE_VARIABLE), path(environment, FOLDER_FILE_VARIABLE),
            count(environment, FOLDER_HOLDER_VARIABLE, Long.MAX_VALUE));
    }

    private static Path path(final Map<String, String> environment, final String name)
    {
        final String text = environment.get(name);
        return null == text || text.isBlank() ? null : Path.of(text);
    }

    private static long count(final Map<String, String> environment, final String name, final long max)
    {
        final String text = environment.get(name);
        if (null == text || text.isBlank())
        {
            return 0;
        }
        try
        {
            final long value = Long.parseLong(text.trim());
            if (value >= 0 && value <= max)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // Reported below with the variable's name.
        }
        throw new IllegalArgumentException(name + ": expected an integer >= 0, got \"" + text + "\"");
    }

    /**
     * @param job     the job's id (empty: none)
     * @param attempt the attempt, 0 for the first
     * @return the id an attempt's ranks meet under ({@code ding4j launch}'s {@code DING4J_JOB_ID}): the job's for the
     *     first, the job's and {@value #RESTART_MARK}N for the N-th restart, so that a rank left over from an earlier
     *     attempt is refused at the rendezvous
     */
    public static String attemptId(final String job, final int attempt)
    {
        return 0 == attempt ? job : job + RESTART_MARK + attempt;
    }

    /**
     * @param attemptId an id {@link #attemptId} made, or any other job id
     * @return the job's id, without the restart mark
     */
    public static String jobOf(final String attemptId)
    {
        final int mark = attemptId.lastIndexOf(RESTART_MARK);
        return mark >= 0 && mark + RESTART_MARK.length() < attemptId.length()
            && attemptId.substring(mark + RESTART_MARK.length()).chars().allMatch(Character::isDigit)
            ? attemptId.substring(0, mark) : attemptId;
    }

    /** @return whether this attempt is a restart (it resumes from the newest verified checkpoint) */
    public boolean restarted()
    {
        return restartCount > 0;
    }

    /**
     * Writes this rank's failure where the launcher reads it (nothing without an error file), in torchrun's shape
     * ({@code {"message": {"message": ..., "extraInfo": {"timestamp": ..., "train_iter": ...}}}}), atomically.
     *
     * @param failure what ended the rank
     * @param updates updates this rank had completed
     * @throws IOException if the file cannot be written
     */
    public void recordFailure(final Throwable failure, final long updates) throws IOException
    {
        if (null == errorFile)
        {
            return;
        }
        final Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("timestamp", Long.toString(System.currentTimeMillis() / 1000));
        extra.put("train_iter", updates);
        final Map<String, Object> message = new LinkedHashMap<>();
        message.put("message", null == failure.getMessage() ? failure.toString()
            : failure.getClass().getSimpleName() + ": " + failure.getMessage());
        message.put("extraInfo", extra);
        AtomicFiles.write(errorFile, JSON.writeValueAsBytes(Map.of("message", message)));
    }

    /**
     * Names the job's output folder where the launcher reads it (nothing without a folder file), atomically: rank 0
     * does once it holds the folder.
     *
     * @param folder the folder
     * @throws IOException if the file cannot be written
     */
    public void recordFolder(final Path folder) throws IOException
    {
        if (null != folderFile)
        {
            AtomicFiles.write(folderFile, folder.toAbsolutePath().normalize().toString()
                .getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * @param file a job's folder file ({@link #recordFolder})
     * @return the folder it names, or null when rank 0 named none (it ended before it took its folder)
     * @throws IOException if it exists but cannot be read
     */
    public static Path readFolder(final Path file) throws IOException
    {
        try
        {
            return Path.of(Files.readString(file, StandardCharsets.UTF_8));
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
    }

    /**
     * A rank's failure as its error file tells it.
     *
     * @param message what the rank said
     * @param updates the updates it had completed, -1 when it did not say
     */
    public record Failure(String message, long updates)
    {
    }

    /**
     * @param file a rank's error file
     * @return what it says, or null when the rank wrote none (it was killed, or it did not fail)
     * @throws IOException if it exists but cannot be read or parsed
     */
    public static Failure readFailure(final Path file) throws IOException
    {
        final JsonNode root;
        try
        {
            root = JSON.readTree(Files.readAllBytes(file));
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
        final JsonNode message = root.path("message");
        return new Failure(message.path("message").asText(message.asText("")),
            message.path("extraInfo").path("train_iter").asLong(-1));
    }
}
