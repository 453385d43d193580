package org.ding4j.hook;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import org.ding4j.jfr.HookEvent;
import org.ding4j.jfr.Jfr;

/**
 * A learner's hooks: one array per position, sorted by priority and stable among equal priorities, walked by
 * index on every call so that dispatch allocates nothing. Changed at setup only; not thread-safe. While JFR
 * records {@code org.ding4j.Hook}, each call is one {@link HookEvent} (allocated then; when off, the check is one
 * field read per call).
 */
public final class Hooks
{
    private static final LearnerHook[] NONE = new LearnerHook[0];

    private final LearnerHook[][] byPosition = new LearnerHook[HookPosition.values().length][];

    /** An empty set of hooks. */
    public Hooks()
    {
        Arrays.fill(byPosition, NONE);
    }

    /**
     * Inserts a hook after every hook of lower or equal priority at its position.
     *
     * @param hook the hook
     */
    public void add(final LearnerHook hook)
    {
        Objects.requireNonNull(hook, "hook");
        final LearnerHook[] current = byPosition[hook.position().ordinal()];
        int at = current.length;
        while (at > 0 && current[at - 1].priority() > hook.priority())
        {
            at--;
        }
        final LearnerHook[] next = new LearnerHook[current.length + 1];
        System.arraycopy(current, 0, next, 0, at);
        next[at] = hook;
        System.arraycopy(current, at, next, at + 1, current.length - at);
        byPosition[hook.position().ordinal()] = next;
    }

    /**
     * A stable merge: every hook of {@code other} is added after this set's hooks of lower or equal priority.
     *
     * @param other hooks to add
     */
    public void merge(final Hooks other)
    {
        for (final HookPosition position : HookPosition.values())
        {
            for (final LearnerHook hook : other.byPosition[position.ordinal()])
            {
                add(hook);
            }
        }
    }

    /**
     * @param position a position
     * @return its hooks in call order
     */
    public List<LearnerHook> at(final HookPosition position)
    {
        return Collections.unmodifiableList(Arrays.asList(byPosition[position.ordinal()]));
    }

    /**
     * @param position a position
     * @param name     a hook name
     * @return the first hook of that name there, or null
     */
    public LearnerHook find(final HookPosition position, final String name)
    {
        for (final LearnerHook hook : byPosition[position.ordinal()])
        {
            if (hook.name().equals(name))
            {
                return hook;
            }
        }
        return null;
    }

    /**
     * Calls every hook at a position in order.
     *
     * @param position where
     * @param context  the learner's context
     * @throws HookException naming the first hook that throws; later hooks do not run
     */
    public void call(final HookPosition position, final HookContext context)
    {
        final LearnerHook[] hooks = byPosition[position.ordinal()];
        for (int i = 0; i < hooks.length; i++)
        {
            call(hooks[i], context);
        }
    }

    /**
     * Calls one hook, wrapping what it throws (an {@link Error} is rethrown as it is).
     *
     * @param hook    the hook
     * @param context the learner's context
     * @throws HookException if the hook throws
     */
    public static void call(final LearnerHook hook, final HookContext context)
    {
        if (Jfr.hooks())
        {
            callRecorded(hook, context);
        }
        else
        {
            invoke(hook, context);
        }
    }

    private static void invoke(final LearnerHook hook, final HookContext context)
    {
        try
        {
            hook.call(context);
        }
        catch (final Error | HookException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw new HookException(hook, t);
        }
    }

    private static void callRecorded(final LearnerHook hook, final HookContext context)
    {
        final HookEvent event = new HookEvent();
        event.begin();
        try
        {
            invoke(hook, context);
        }
        finally
        {
            event.end();
            if (event.shouldCommit())
            {
                event.position = hook.position().configName();
                event.hook = hook.name();
                event.update = context.lastIter();
                event.commit();
            }
        }
    }

    /** @return all hooks, position by position, in call order */
    public List<LearnerHook> all()
    {
        final List<LearnerHook> all = new ArrayList<>();
        for (final LearnerHook[] hooks : byPosition)
        {
            all.addAll(Arrays.asList(hooks));
        }
        return all;
    }
}
