package org.ding4j.hook;

import java.util.Arrays;

/** Where in the learner's life a hook runs. */
public enum HookPosition
{
    /**
     * Once, at the start of the learner's {@code run()} (and so {@code start()}); a caller that trains with
     * {@code train()} in its own loop calls {@code callHook} itself, or the checkpoint load does not happen.
     */
    BEFORE_RUN("before_run"),
    /** Once, at the end of the learner's {@code run()}, also after a failure (its own loop: {@code callHook}). */
    AFTER_RUN("after_run"),
    /** Before each {@code train()} update. */
    BEFORE_ITER("before_iter"),
    /** After each completed update, with {@code lastIter} already counting it. */
    AFTER_ITER("after_iter");

    private final String configName;

    HookPosition(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name configs use, e.g. {@code after_iter} */
    public String configName()
    {
        return configName;
    }

    /**
     * @param name a config name
     * @return the position
     * @throws IllegalArgumentException naming the accepted names if it is none of them
     */
    public static HookPosition of(final String name)
    {
        for (final HookPosition position : values())
        {
            if (position.configName.equals(name))
            {
                return position;
            }
        }
        throw new IllegalArgumentException("hook position: expected one of "
            + Arrays.stream(values()).map(HookPosition::configName).toList() + ", got " + name);
    }
}
