package org.ding4j.hook;

import java.util.Objects;

import org.ding4j.config.Config;
import org.ding4j.config.ValueRule;

/**
 * A plug-in the learner calls at one {@link HookPosition}. Hooks run on the training thread, in ascending
 * priority (lower first) and, among equal priorities, in the order they were added. A hook receives a
 * {@link HookContext} (counters, logs, checkpoints), not the learner. At {@code after_iter} every hook, at any
 * priority, sees the iteration's log vars in {@code context.log().buffer()}: the learner clears the buffers after
 * the last {@code after_iter} hook has run.
 * <p>
 * A subclass registered by type ({@link HookRegistry#registerLearnerHook}) has a public constructor
 * {@code (String name, int priority, HookPosition position, Config extArgs)}.
 */
public abstract class LearnerHook
{
    private final String name;
    private final int priority;
    private final HookPosition position;

    /**
     * @param name     unique among the learner's hooks at one position, by convention
     * @param priority >= 0, lower runs first
     * @param position where it runs
     * @throws IllegalArgumentException if the priority is negative
     */
    protected LearnerHook(final String name, final int priority, final HookPosition position)
    {
        this.name = Objects.requireNonNull(name, "name");
        this.position = Objects.requireNonNull(position, "position");
        if (priority < 0)
        {
            throw new IllegalArgumentException("hook " + name + ": priority must be >= 0, got " + priority);
        }
        this.priority = priority;
    }

    /**
     * Reads the {@code freq} argument that periodic hooks share.
     *
     * @param extArgs the hook's arguments
     * @return {@code ext_args.freq}, 1 when absent
     * @throws IllegalArgumentException if it is not a positive integer
     */
    protected static long freq(final Config extArgs)
    {
        if (!extArgs.has("freq"))
        {
            return 1L;
        }
        final String problem = ValueRule.POSITIVE_INTEGER.check(extArgs.get("freq"));
        if (null != problem)
        {
            throw new IllegalArgumentException("ext_args.freq: " + problem + ", got " + extArgs.get("freq"));
        }
        return extArgs.getLong("freq");
    }

    /** @return the hook's name */
    public final String name()
    {
        return name;
    }

    /** @return its priority, lower first */
    public final int priority()
    {
        return priority;
    }

    /** @return where it runs */
    public final HookPosition position()
    {
        return position;
    }

    /**
     * Does the hook's work.
     *
     * @param context what the hook may read and do (valid during the call)
     * @throws Exception any failure; the learner reports it with this hook's name and position
     */
    public abstract void call(HookContext context) throws Exception;

    /**
     * Releases what the hook holds (threads, files); the learner calls it once from {@code close()}, before it
     * closes the summary writer. The default does nothing.
     */
    public void close()
    {
    }

    @Override
    public String toString()
    {
        return name + "@" + position.configName() + "/" + priority;
    }
}
