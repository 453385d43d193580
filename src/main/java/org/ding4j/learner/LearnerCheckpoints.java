package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.checkpoint.CheckpointIO;
import org.ding4j.checkpoint.CorruptCheckpointException;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.hook.Checkpoints;
import org.ding4j.jfr.CheckpointEvent;
import org.ding4j.jfr.Jfr;

/**
 * A learner's checkpoints: its policy's {@code stateDict()} plus {@code last_iter} and {@code last_step}, written
 * through a {@link CheckpointIO} (PyTorch's format by default) into {@code ./{exp}/ckpt} (or
 * {@code ./{exp}/ckpt_{instance}}). The save hooks, the run's interrupt and exception checkpoints and
 * {@code load_ckpt} all go through here, each save and load one JFR {@link CheckpointEvent} when recorded. Used on
 * the training thread.
 */
public final class LearnerCheckpoints implements Checkpoints
{
    private final BaseLearner<?> learner;
    private final Path dir;
    private final Map<String, Part> parts = new LinkedHashMap<>();
    private CheckpointIO io = new TorchCheckpointIO();
    private String nameOverride;

    LearnerCheckpoints(final BaseLearner<?> learner, final String expName, final String instanceName)
    {
        this.learner = learner;
        this.dir = folder(expName, instanceName);
    }

    /**
     * @param expName      the experiment folder
     * @param instanceName the learner's instance name
     * @return where that learner writes its checkpoints: {@code ./{exp}/ckpt}, or {@code ./{exp}/ckpt_{instance}}
     */
    public static Path folder(final String expName, final String instanceName)
    {
        return Path.of(expName).resolve("learner".equals(instanceName) ? "ckpt" : "ckpt_" + instanceName);
    }

    /**
     * The checkpoint a restarted run resumes from.
     *
     * @param file     the file
     * @param lastIter the updates it holds
     * @param refused  newer files that failed verification, each with its reason
     */
    public record Verified(Path file, long lastIter, List<String> refused)
    {
    }

    /**
     * The newest checkpoint in a folder that reads back whole: the files are tried newest first (by modification
     * time, so a run resumed from an older file and saved since counts from its own saves), each read completely
     * (every record's CRC checked) and required to hold {@code last_iter}. The exception checkpoint is never taken:
     * a run fails mid-update, so its counters and parameters need not agree; nor are the temporary files of an
     * interrupted write. A file that fails is named in {@link Verified#refused()} and the next older one tried.
     *
     * @param dir a checkpoint folder ({@link #folder})
     * @param io  how checkpoints are read
     * @return the newest verified checkpoint, or empty when there is none (or no folder)
     * @throws IOException if the folder cannot be listed
     */
    public static Optional<Verified> newestVerified(final Path dir, final CheckpointIO io) throws IOException
    {
        return newestVerified(dir, io, FileTime.fromMillis(Long.MIN_VALUE));
    }

    /**
     * {@link #newestVerified(Path, CheckpointIO)} among the files modified at or after {@code notBefore} (those of a
     * job that began then; older ones are an earlier job's).
     *
     * @param dir       a checkpoint folder ({@link #folder})
     * @param io        how checkpoints are read
     * @param notBefore the earliest modification time taken
     * @return the newest verified checkpoint, or empty when there is none (or no folder)
     * @throws IOException if the folder cannot be listed
     */
    public static Optional<Verified> newestVerified(final Path dir, final CheckpointIO io, final FileTime notBefore)
        throws IOException
    {
        if (!Files.isDirectory(dir))
        {
            return Optional.empty();
        }
        final List<Path> candidates = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir))
        {
            files.filter(f -> Files.isRegularFile(f) && !AtomicFiles.isTemporary(f)
                && !BaseLearner.EXCEPTION_CHECKPOINT.equals(f.getFileName().toString())).forEach(candidates::add);
        }
        final Map<Path, FileTime> times = new HashMap<>();
        for (final Path file : candidates)
        {
            times.put(file, Files.getLastModifiedTime(file));
        }
        candidates.removeIf(file -> times.get(file).compareTo(notBefore) < 0);
        candidates.sort(Comparator.comparing(times::get, Comparator.reverseOrder()));
        final List<String> refused = new ArrayList<>();
        for (final Path file : candidates)
        {
            try (PointerScope scope = new PointerScope())
            {
                final Object lastIter = io.read(file).get(LAST_ITER);
                if (lastIter instanceof Long n && n >= 0)
                {
                    return Optional.of(new Verified(file, n, refused));
                }
                refused.add(file + ": " + LAST_ITER + ": expected an integer >= 0, got " + lastIter);
            }
            catch (final IOException | RuntimeException ex)
            {
                // Whatever is wrong with this file, an older one may still be whole.
                refused.add(file + ": " + ex.getMessage());
            }
        }
        return Optional.empty();
    }

    @Override
    public Path dir()
    {
        return dir;
    }

    @Override
    public String nameOverride()
    {
        return nameOverride;
    }

    /** @param name the file name the next {@code save_ckpt} call writes, or null for the iteration name */
    public void nameOverride(final String name)
    {
        this.nameOverride = name;
    }

    /** @return how checkpoints are read and written */
    public CheckpointIO io()
    {
        return io;
    }

    /** @param io how checkpoints are read and written */
    public void io(final CheckpointIO io)
    {
        this.io = Objects.requireNonNull(io, "io");
    }

    /** A piece of state beside the policy's that a resume needs (e.g. a pipeline's best return). */
    private record Part(Supplier<Map<String, Object>> save, Consumer<Map<String, Object>> restore)
    {
    }

    /**
     * Adds state that checkpoints carry beside the policy's, under its own key: {@code save} is called at every
     * save, {@code restore} at a load of a checkpoint that has the key (a checkpoint without it leaves the state as
     * it is). The pipeline keeps its best evaluation and schedule this way, so a resumed run continues the run, not
     * only the learner.
     *
     * @param key     the checkpoint key (not one of the policy's, {@code last_iter} or {@code last_step})
     * @param save    the state now, plain values only (numbers, strings, booleans, lists, maps)
     * @param restore takes what {@code save} gave
     */
    public void register(final String key, final Supplier<Map<String, Object>> save,
        final Consumer<Map<String, Object>> restore)
    {
        Objects.requireNonNull(key, "key");
        if (LAST_ITER.equals(key) || LAST_STEP.equals(key) || null != parts.putIfAbsent(key, new Part(
            Objects.requireNonNull(save, "save"), Objects.requireNonNull(restore, "restore"))))
        {
            throw new IllegalArgumentException("checkpoint key " + key + " is taken");
        }
    }

    @Override
    public Path save(final String fileName) throws IOException
    {
        Objects.requireNonNull(fileName, "fileName");
        if (fileName.isEmpty() || fileName.contains("/") || fileName.contains("\\") || ".".equals(fileName)
            || "..".equals(fileName))
        {
            throw new IllegalArgumentException("checkpoint file name: expected a plain file name inside " + dir
                + ", got \"" + fileName + "\"");
        }
        final Path file = dir.resolve(fileName);
        final CheckpointEvent event = Jfr.checkpoints() ? new CheckpointEvent() : null;
        if (null != event)
        {
            event.begin();
        }
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(learner.requirePolicy().stateDict());
            state.put(LAST_ITER, learner.trainIter());
            state.put(LAST_STEP, learner.collectorEnvstep());
            parts.forEach((key, part) -> state.put(key, part.save().get()));
            io.write(file, state);
        }
        commit(event, "save", file);
        return file;
    }

    /** Ends and commits a save's or load's event; none (JFR not up when it began) is nothing to do. */
    private void commit(final CheckpointEvent event, final String operation, final Path file) throws IOException
    {
        if (null == event)
        {
            return;
        }
        event.end();
        if (event.shouldCommit())
        {
            event.operation = operation;
            event.file = file.toString();
            event.bytes = Files.size(file);
            event.update = learner.trainIter();
            event.commit();
        }
    }

    /**
     * Rank 0 saves {@link BaseLearner#INTERRUPT_CHECKPOINT} (the policy state with the current counters), logged.
     *
     * @throws IOException if the write fails (an older file of that name stays intact)
     */
    void saveOnInterrupt() throws IOException
    {
        if (0 == learner.rank())
        {
            learner.info("stop signal: saved " + save(BaseLearner.INTERRUPT_CHECKPOINT) + " after "
                + learner.trainIter() + " updates");
        }
    }

    /** Rank 0 saves a checkpoint of a failed run; a failure of the save is suppressed into the run's. */
    void saveQuietly(final String fileName, final Throwable failure)
    {
        if (0 != learner.rank() || null == learner.policy())
        {
            return;
        }
        try
        {
            learner.info("saved " + save(fileName) + " after " + learner.trainIter() + " updates");
        }
        catch (final Exception | Error e)
        {
            failure.addSuppressed(e);
        }
    }

    /** The checkpoint asked for through {@link LearnerControl}: {@code iteration_N.pth.tar}, rank 0 only. */
    Path saveRequested() throws IOException
    {
        if (0 != learner.rank())
        {
            throw new IllegalStateException("rank " + learner.rank() + " writes no checkpoints: ask rank 0");
        }
        final Path file = save("iteration_" + learner.trainIter() + ".pth.tar");
        learner.info("saved " + file + " on request after " + learner.trainIter() + " updates");
        return file;
    }

    /** A killed earlier run may have left temporary checkpoint files: they are no checkpoints, so they go. */
    void removeStaleTemporaries()
    {
        try
        {
            for (final Path stale : AtomicFiles.removeStaleTemporaries(dir))
            {
                learner.info("removed " + stale + ", left by an interrupted write");
            }
        }
        catch (final IOException ex)
        {
            learner.log().close();
            throw new IllegalStateException("cannot clean the checkpoint folder " + dir + ": " + ex, ex);
        }
    }

    /**
     * The largest counter a checkpoint may carry: beyond any run's reach (285 years at a million updates a second),
     * and the largest a JSON reader or a float64 keeps exactly; 2^62 once named a checkpoint
     * {@code iteration_4611686018427387904.pth.tar}.
     */
    private static final long MAX_COUNTER = 1L << 53;

    private static Long counter(final Path file, final Object value, final String key, final long min)
        throws CorruptCheckpointException
    {
        if (null == value)
        {
            return null;
        }
        if (!(value instanceof Long n) || n < min || n > MAX_COUNTER)
        {
            throw new CorruptCheckpointException(file, key + ": expected an integer in [" + min + ", 2^53], got "
                + (value instanceof String ? "'" + value + "'" : value));
        }
        return n;
    }

    @Override
    public void load(final Path file) throws IOException
    {
        final CheckpointEvent event = Jfr.checkpoints() ? new CheckpointEvent() : null;
        if (null != event)
        {
            event.begin();
        }
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(io.read(file));
            // Checked before anything changes: a bad counter would corrupt every count, save name and schedule after
            // it.
            final Long lastIter = counter(file, state.remove(LAST_ITER), LAST_ITER, 0);
            final Long lastStep = counter(file, state.remove(LAST_STEP), LAST_STEP, -1);
            final Map<String, Map<String, Object>> restored = new LinkedHashMap<>();
            for (final String key : parts.keySet())
            {
                final Object part = state.remove(key);
                if (null != part && !(part instanceof Map<?, ?>))
                {
                    throw new CorruptCheckpointException(file, key + ": expected a dict, got " + part);
                }
                if (null != part)
                {
                    @SuppressWarnings("unchecked")
                    final Map<String, Object> map = (Map<String, Object>)part;
                    restored.put(key, map);
                }
            }
            learner.requirePolicy().loadStateDict(state);
            if (null != lastIter)
            {
                learner.lastIter().update(lastIter);
            }
            if (null != lastStep)
            {
                learner.collectorEnvstep(lastStep);
            }
            restored.forEach((key, map) -> parts.get(key).restore().accept(map));
        }
        commit(event, "load", file);
    }
}
