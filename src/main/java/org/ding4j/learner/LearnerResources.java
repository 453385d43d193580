package org.ding4j.learner;

import java.util.ArrayList;
import java.util.List;

import org.ding4j.data.AsyncDataLoader;
import org.ding4j.hook.HookException;
import org.ding4j.hook.Hooks;
import org.ding4j.hook.LearnerHook;
import org.ding4j.internal.Closing;
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
        final List<AutoCloseable> all = new ArrayList<>();
        all.add(loader);
        for (final LearnerHook hook : hooks.all())
        {
            all.add(() -> closeHook(hook));
        }
        all.add(log);
        all.addAll(others);
        Closing.all(all.toArray(new AutoCloseable[0]));
    }

    /** Closes a hook; its failure names it. */
    private static void closeHook(final LearnerHook hook)
    {
        try
        {
            hook.close();
        }
        catch (final RuntimeException | Error e)
        {
            throw new HookException(hook, e);
        }
    }
}
