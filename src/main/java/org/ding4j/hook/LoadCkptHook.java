package org.ding4j.hook;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;

/**
 * {@code load_ckpt}: reads a checkpoint, restores {@code last_iter} and {@code last_step} (the collector env step)
 * when present, and passes the rest to the policy's {@code loadStateDict}. An empty {@code load_path} does nothing.
 * Every rank loads the checkpoint it resumes from.
 */
public final class LoadCkptHook extends LearnerHook
{
    private final String loadPath;

    /**
     * @param name     hook name
     * @param priority priority
     * @param position where it runs (before_run)
     * @param extArgs  {@code load_path}: the checkpoint file, "" for none
     */
    public LoadCkptHook(final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        super(name, priority, position);
        this.loadPath = extArgs.has("load_path") ? extArgs.getString("load_path") : "";
    }

    @Override
    public void call(final BaseLearner learner) throws Exception
    {
        if (loadPath.isEmpty())
        {
            return;
        }
        final Path file = Path.of(loadPath);
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new LinkedHashMap<>(learner.checkpointIO().read(file));
            final Object lastIter = state.remove(SaveCkptHook.LAST_ITER);
            if (lastIter instanceof Number n)
            {
                learner.lastIter().update(n.longValue());
            }
            final Object lastStep = state.remove(SaveCkptHook.LAST_STEP);
            if (lastStep instanceof Number n)
            {
                learner.collectorEnvstep(n.longValue());
            }
            learner.policy().loadStateDict(state);
        }
        learner.info(name() + ": load ckpt in " + file);
    }
}
