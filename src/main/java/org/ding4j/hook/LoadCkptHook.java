package org.ding4j.hook;

import java.nio.file.Path;

import org.ding4j.config.Config;

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
    public void call(final HookContext context) throws Exception
    {
        if (loadPath.isEmpty())
        {
            return;
        }
        final Path file = Path.of(loadPath);
        context.checkpoints().load(file);
        context.log().info(name() + ": load ckpt in " + file);
    }
}
