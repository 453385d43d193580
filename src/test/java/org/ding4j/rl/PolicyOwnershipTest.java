package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.ding4j.config.Config;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pipeline's run owns its policy: an application thread that closes it mid-run (reaching it through
 * {@code BaseLearner.policy()}) is refused with an exception naming the way to stop, and the run goes on to its end.
 * Before, the close freed the native memory the run's next update or action used, and the JVM died (SIGSEGV).
 */
class PolicyOwnershipTest
{
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"dqn", "td3", "sac", "ppo"})
    void aCloseFromAnotherThreadMidRunShouldBeRefusedAndTheRunShouldEnd(final String algorithm) throws Exception
    {
        final AtomicReference<Throwable> refused = new AtomicReference<>();
        final AtomicReference<AutoCloseable> policy = new AtomicReference<>();
        final CountDownLatch tried = new CountDownLatch(1);
        final Config config = Config.empty().with("policy.type", algorithm)
            .with("exp_name", dir.resolve(algorithm).toString()).with("env.stop_value", 1000.0)
            .with("pipeline.max_train_iter", 40L);
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(algorithm.endsWith("3") || "sac".equals(algorithm)
            ? config.with("policy.random_collect_size", 100L) : config);
        pipeline.onLearner(learner -> learner.registerHook(new LearnerHook("close_from_elsewhere", 99,
            HookPosition.AFTER_ITER)
        {
            @Override
            public void call(final HookContext context)
            {
                if (1 != tried.getCount())
                {
                    return;
                }
                final Thread closer = new Thread(() ->
                {
                    try
                    {
                        policy.set((AutoCloseable) learner.policy());
                        policy.get().close();
                    }
                    catch (final Exception ex)
                    {
                        refused.set(ex);
                    }
                    tried.countDown();
                }, "application-closer");
                closer.start();
                try
                {
                    assertTrue(tried.await(30, TimeUnit.SECONDS), "the close returned");
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }));
        final OffPolicyRun.Summary summary = pipeline.run(p -> { });
        assertEquals(0, tried.getCount(), "the hook ran");
        assertNotNull(refused.get(), "the close was refused");
        assertEquals(IllegalStateException.class, refused.get().getClass());
        assertTrue(refused.get().getMessage().endsWith(": a pipeline's run owns it and closes it when the run ends; "
            + "closing it while the run trains or acts with it would free memory in use: stop the run (the pipeline's "
            + "stop() or BaseLearner.stop()) and let it close the policy"), refused.get().getMessage());
        assertTrue(summary.trainIter() >= 40, summary.toString());
        // The run closed it as it ended: a close now, or two, does nothing.
        policy.get().close();
        policy.get().close();
        final IllegalStateException closed = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> ServingActor.of((org.ding4j.policy.Policy<?>) policy.get()));
        assertTrue(closed.getMessage().startsWith("ServingActor: the policy is closed"), closed.getMessage());
    }

    /** A run whose envs throw as they close still frees its policy: the parts close each part though one fails. */
    @Test
    void aRunWhoseEnvsFailToCloseShouldStillCloseItsPolicy() throws Exception
    {
        assertTheFailedCloseFreesThePolicy(Config.empty().with("exp_name", dir.resolve("env-close-fails").toString())
            .with("env.type", org.ding4j.testing.SteppedCloseFailingCartPole.class.getName()), learner -> { },
            "close failed");
    }

    /** A run whose learner's close fails (a hook's close throws) still frees its policy: the run closes each part. */
    @Test
    void aRunWhoseHookFailsToCloseShouldStillCloseItsPolicy() throws Exception
    {
        assertTheFailedCloseFreesThePolicy(Config.empty().with("exp_name", dir.resolve("hook-close-fails").toString()),
            learner -> learner.registerHook(new LearnerHook("fails_to_close", 99, HookPosition.AFTER_RUN)
            {
                @Override
                public void call(final HookContext context)
                {
                }

                @Override
                public void close()
                {
                    throw new IllegalStateException("a hook failed to close");
                }
            }), "a hook failed to close");
    }

    /** Runs 20 DQN updates whose end's close fails with {@code failure}; the run's policy must be closed anyway. */
    private static void assertTheFailedCloseFreesThePolicy(final Config config,
        final java.util.function.Consumer<org.ding4j.learner.BaseLearner<?>> onLearner, final String failure)
        throws Exception
    {
        final AtomicReference<org.ding4j.policy.Policy<?>> policy = new AtomicReference<>();
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(config.with("env.stop_value", 1000.0)
            .with("pipeline.max_train_iter", 20L));
        pipeline.onLearner(learner ->
        {
            policy.set(learner.policy());
            onLearner.accept(learner);
        });
        final IllegalStateException failed = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalStateException.class, () -> pipeline.run(p -> { }));
        assertTrue(String.valueOf(failed.getMessage()).contains(failure)
            || String.valueOf(failed.getCause()).contains(failure), String.valueOf(failed));
        final IllegalStateException closed = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalStateException.class, () -> ServingActor.of(policy.get()));
        assertTrue(closed.getMessage().startsWith("ServingActor: the policy is closed"), closed.getMessage());
    }
}
