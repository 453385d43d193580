package org.ding4j.learner;

import java.util.List;

import org.ding4j.data.AsyncDataLoader;
import org.ding4j.hook.HookException;
import org.ding4j.hook.Hooks;
import org.ding4j.hook.LearnerHook;
import org.ding4j.log.LearnerLog;

/** Closes what a learner holds: the loader, every hook, the logs; each even when an earlier one fails. */
final class LearnerResources
{
    private LearnerResources()
    {
    }

    /**
     * @param loader the data loader, or null
     * @param hooks  the hooks (log_show writes its pending reports)
     * @param log    the TensorBoard writer and the text log
     * @param others what integrations tied to the learner, closed last
     * @throws RuntimeException the first failure (a hook's as a {@link HookException} naming it), others suppressed
     */
    static void closeAll(final AsyncDataLoader<?> loader, final Hooks hooks, final LearnerLog log,
        final List<AutoCloseable> others)
    {
        RuntimeException failure = null;
        if (null != loader)
        {
            failure = closeOne(failure, null, loader);
        }
        for (final LearnerHook hook : hooks.all())
        {
            failure = closeOne(failure, hook, hook::close);
        }
        failure = closeOne(failure, null, log);
        for (final AutoCloseable other : others)
        {
            failure = closeOne(failure, null, other);
        }
        if (null != failure)
        {
            throw failure;
        }
    }

    /** Closes one resource; the first failure is kept, later ones are suppressed into it. */
    private static RuntimeException closeOne(final RuntimeException failure, final LearnerHook hook,
        final AutoCloseable resource)
    {
        try
        {
            resource.close();
            return failure;
        }
        catch (final Exception | Error e)
        {
            final RuntimeException wrapped = null != hook ? new HookException(hook, e)
                : e instanceof RuntimeException re ? re : new IllegalStateException("closing the learner: " + e, e);
            if (null == failure)
            {
                return wrapped;
            }
            failure.addSuppressed(wrapped);
            return failure;
        }
    }
}
