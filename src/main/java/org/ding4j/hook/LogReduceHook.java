package org.ding4j.hook;

import org.ding4j.config.Config;

/** {@code log_reduce}: hands the iteration's log buffer to the learner's {@link LogReducer} (world size > 1). */
public final class LogReduceHook extends LearnerHook
{
    /**
     * @param name     hook name
     * @param priority priority (10 in the simplified form: before log_show)
     * @param position where it runs (after_iter)
     * @param extArgs  none used
     */
    public LogReduceHook(final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        super(name, priority, position);
    }

    @Override
    public void call(final HookContext context) throws Exception
    {
        context.logReducer().allReduce(context.log().buffer());
    }
}
