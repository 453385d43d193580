package org.ding4j.hook;

import org.ding4j.config.Config;

/** Builds a hook of one registered type from its full-form config. */
@FunctionalInterface
public interface HookFactory
{
    /**
     * @param name     the hook's name
     * @param priority >= 0, lower first
     * @param position where it runs
     * @param extArgs  the type's own arguments ({@code ext_args}); empty when none were given
     * @return the hook
     */
    LearnerHook create(String name, int priority, HookPosition position, Config extArgs);
}
