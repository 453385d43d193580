package org.ding4j.learner;

import java.util.List;

import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;

/** The child JVM of {@link StartTest}'s SIGTERM test: trains until signalled, reporting each completed update. */
final class SignalChild
{
    private SignalChild()
    {
    }

    public static void main(final String[] args)
    {
        // The application opts in, as the command line does: run() alone installs no handler.
        StopSignals.installForProcess();
        try (BaseLearner learner = new BaseLearner(Config.of(java.util.Map.of("log_policy", false)),
            new CountingPolicy(), null, DistInfo.single(), args[0], "learner"))
        {
            learner.registerHook(new LearnerHook("report", 200, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext l)
                {
                    System.out.println("iteration " + l.lastIter());
                    System.out.flush();
                }
            });
            learner.dataSource(size -> List.of());
            learner.setupDataloader();
            learner.start();
        }
        System.out.println("returned");
        System.out.flush();
    }
}
