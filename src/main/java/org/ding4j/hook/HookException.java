package org.ding4j.hook;

/** A hook failed: the message names the hook and its position; the cause is what it threw. */
public final class HookException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String hookName;
    private final HookPosition position;

    /**
     * @param hook  the failed hook
     * @param cause what it threw
     */
    public HookException(final LearnerHook hook, final Throwable cause)
    {
        super("hook " + hook.name() + " (" + hook.position().configName() + ") failed: " + cause, cause);
        this.hookName = hook.name();
        this.position = hook.position();
    }

    /** @return the failed hook's name */
    public String hookName()
    {
        return hookName;
    }

    /** @return where it ran */
    public HookPosition position()
    {
        return position;
    }
}
