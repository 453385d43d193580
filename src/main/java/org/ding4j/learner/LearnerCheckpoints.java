package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.CheckpointIO;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.hook.Checkpoints;

/**
 * A learner's checkpoints: its policy's {@code stateDict()} plus {@code last_iter} and {@code last_step}, written
 * through a {@link CheckpointIO} (PyTorch's format by default) into {@code ./{exp}/ckpt} (or
 * {@code ./{exp}/ckpt_{instance}}). The save hooks, the run's interrupt and exception checkpoints and
 * {@code load_ckpt} all go through here. Used on the training thread.
 */
public final class LearnerCheckpoints implements Checkpoints
{
    private final BaseLearner<?> learner;
    private final Path dir;
    private CheckpointIO io = new TorchCheckpointIO();
    private String nameOverride;

    LearnerCheckpoints(final BaseLearner<?> learner, final String expName, final String instanceName)
    {
        this.learner = learner;
        this.dir = Path.of(expName).resolve("learner".equals(instanceName) ? "ckpt" : "ckpt_" + instanceName);
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

    @Override
    public Path save(final String fileName) throws IOException
    {
        final Path file = dir.resolve(fileName);
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(learner.requirePolicy().stateDict());
            state.put(LAST_ITER, learner.trainIter());
            state.put(LAST_STEP, learner.collectorEnvstep());
            io.write(file, state);
        }
        return file;
    }

    @Override
    public void load(final Path file) throws IOException
    {
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(io.read(file));
            final Object lastIter = state.remove(LAST_ITER);
            if (lastIter instanceof Number n)
            {
                learner.lastIter().update(n.longValue());
            }
            final Object lastStep = state.remove(LAST_STEP);
            if (lastStep instanceof Number n)
            {
                learner.collectorEnvstep(n.longValue());
            }
            learner.requirePolicy().loadStateDict(state);
        }
    }
}
