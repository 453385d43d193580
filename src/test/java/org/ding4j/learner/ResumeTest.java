package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookPosition;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 20 updates straight equal 10 + checkpoint + a new learner that loads it + 10 more, bit for bit. */
@Tag("native")
class ResumeTest
{
    @TempDir
    Path dir;

    @Test
    void shouldResumeFromACheckpointToTheSameWeightsAsTrainingStraightThrough()
    {
        Threads.configure();
        try (RegressionPolicy straight = new RegressionPolicy(1);
            RegressionPolicy first = new RegressionPolicy(1);
            RegressionPolicy resumed = new RegressionPolicy(99))
        {
            try (BaseLearner learner = learner("straight", straight))
            {
                for (long i = 0; i < 20; i++)
                {
                    learner.train(i);
                }
            }
            try (BaseLearner learner = learner("first", first, "hook.save_ckpt_after_iter=10"))
            {
                for (long i = 0; i < 10; i++)
                {
                    learner.train(i);
                }
            }
            assertFalse(straight.values().equal(resumed.values()), "a different initialisation to start from");
            final String ckpt = dir.resolve("first/ckpt/iteration_10.pth.tar").toString();
            try (BaseLearner learner = learner("resumed", resumed, "hook.load_ckpt_before_run=" + ckpt))
            {
                learner.callHook(HookPosition.BEFORE_RUN);
                assertEquals(10, learner.trainIter());
                for (long i = 10; i < 20; i++)
                {
                    learner.train(i);
                }
                assertEquals(20, learner.trainIter());
            }
            assertTrue(straight.values().equal(resumed.values()), "resumed weights equal straight-through weights");
        }
    }

    private BaseLearner learner(final String exp, final RegressionPolicy policy, final String... overrides)
    {
        final Config cfg = ConfigFiles.override(Config.empty(), List.of(overrides));
        return new BaseLearner(cfg, policy, null, DistInfo.single(), dir.resolve(exp).toString(), "learner");
    }
}
