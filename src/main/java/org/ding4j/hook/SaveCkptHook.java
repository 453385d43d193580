package org.ding4j.hook;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;

/**
 * {@code save_ckpt}: on rank 0, when {@code lastIter % freq == 0}, writes {@code policy.stateDict()} plus
 * {@code last_iter} and {@code last_step} to the learner's checkpoint folder, under the learner's
 * {@code ckptName} if set, else {@code iteration_{lastIter}.pth.tar}. Since {@code lastIter} counts completed
 * updates, {@code iteration_N} holds exactly N updates.
 */
public final class SaveCkptHook extends LearnerHook
{
    /** Checkpoint key of the completed-update count. */
    public static final String LAST_ITER = "last_iter";
    /** Checkpoint key of the collector env step. */
    public static final String LAST_STEP = "last_step";

    private final long freq;

    /**
     * @param name     hook name
     * @param priority priority
     * @param position where it runs
     * @param extArgs  {@code freq}: save every this many iterations (default 1)
     * @throws IllegalArgumentException if freq is not a positive integer
     */
    public SaveCkptHook(final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        super(name, priority, position);
        this.freq = freq(extArgs);
    }

    @Override
    public void call(final BaseLearner learner) throws IOException
    {
        if (0 != learner.rank() || 0 != learner.lastIter().val() % freq)
        {
            return;
        }
        final String fileName = null != learner.ckptName() ? learner.ckptName()
            : "iteration_" + learner.lastIter().val() + ".pth.tar";
        final Path file = write(learner, fileName);
        learner.info(name() + ": save ckpt in " + file);
    }

    /**
     * Writes the learner's checkpoint now (also used for the interrupt and exception checkpoints).
     *
     * @param learner  the learner
     * @param fileName file name inside its checkpoint folder
     * @return the file written
     * @throws IOException if the write fails (an older file of that name stays intact)
     */
    public static Path write(final BaseLearner learner, final String fileName) throws IOException
    {
        final Path file = learner.checkpointDir().resolve(fileName);
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(learner.policy().stateDict());
            state.put(LAST_ITER, learner.lastIter().val());
            state.put(LAST_STEP, learner.collectorEnvstep());
            learner.checkpointIO().write(file, state);
        }
        return file;
    }
}
