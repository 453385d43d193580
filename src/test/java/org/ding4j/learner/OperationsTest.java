package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.jmx.LearnerMBean;
import org.ding4j.jmx.LearnerMXBean;
import org.ding4j.micrometer.LearnerMetrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A running learner seen and driven from outside, as a Java service's operators would: the JMX bean through a JMX
 * client proxy of the platform server (counters, last values, percentiles; pause, save now, resume, stop), the
 * Micrometer meters in a registry, both gone when the learner closes.
 */
class OperationsTest
{
    private static final long WAIT_S = 20;

    @TempDir
    Path dir;

    private BaseLearner<Object> learner(final String exp, final String instance)
    {
        return learner(exp, instance, DistInfo.single());
    }

    /** Another rank's learner may share the names (a second learner of the same rank there is refused). */
    private BaseLearner<Object> learner(final String exp, final String instance, final DistInfo rank)
    {
        return new BaseLearner<>(Config.empty(), new CountingPolicy(), null, rank, dir.resolve(exp).toString(),
            instance);
    }

    /** Waits for a state another thread reaches, with a deadline (no fixed sleep). */
    private static void await(final BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            // A millisecond's park, not a yield: on two loaded cores a spinning waiter takes the learner's time.
            LockSupport.parkNanos(1_000_000L);
        }
    }

    /** Counts down when the learner has completed {@code at} updates, from its after_iter hook. */
    private static CountDownLatch reached(final BaseLearner<Object> learner, final long at, final Runnable then)
    {
        final CountDownLatch latch = new CountDownLatch(1);
        learner.registerHook(new LearnerHook("reached", 0, HookPosition.AFTER_ITER)
        {
            @Override
            public void call(final HookContext context)
            {
                if (at == context.lastIter())
                {
                    then.run();
                    latch.countDown();
                }
            }
        });
        return latch;
    }

    @Test
    void theMBeanShouldShowTheCountersAndPauseSaveResumeAndStopARunningLearner() throws Exception
    {
        final BaseLearner<Object> learner = learner("jmx", "learner");
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName name = LearnerMBean.register(learner);
        assertEquals("org.ding4j:type=Learner,experiment=" + ObjectName.quote(dir.resolve("jmx").toString())
            + ",name=\"learner\"", name.toString());
        final LearnerMXBean bean = JMX.newMXBeanProxy(server, name, LearnerMXBean.class);
        // Paused from the training thread itself at update 5, so the pause takes effect before update 6.
        final CountDownLatch atFive = reached(learner, 5, learner.control()::pause);
        final CompletableFuture<RunOutcome> run =
            CompletableFuture.supplyAsync(() -> learner.run(new EndlessLoop(learner, () -> { })));
        assertTrue(atFive.await(WAIT_S, TimeUnit.SECONDS));
        await(bean::isWaiting, "the pause");
        assertTrue(bean.isPaused());
        assertEquals(5, bean.getUpdates());
        assertEquals(0.2, bean.getLastValues().get("total_loss"), 1e-12);
        assertEquals(5, bean.getTrainTimeCount());
        assertTrue(bean.getTrainTimeP50Nanos() > 0 && bean.getTrainTimeP50Nanos() <= bean.getTrainTimeP999Nanos());

        final Path saved = Path.of(bean.saveCheckpoint());
        assertEquals(learner.checkpoints().dir().resolve("iteration_5.pth.tar"), saved);
        assertTrue(Files.size(saved) > 0);
        assertEquals(5, bean.getUpdates(), "a save while paused runs no update");
        assertTrue(bean.isWaiting());

        final CountDownLatch atTwenty = reached(learner, 20, () -> { });
        bean.resume();
        assertTrue(atTwenty.await(WAIT_S, TimeUnit.SECONDS));
        bean.stop();
        assertEquals(RunOutcome.STOPPED, run.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(server.isRegistered(name), "registered until the learner closes");
        learner.close();
        assertFalse(server.isRegistered(name));

        // The saved checkpoint is a real one: a fresh learner resumes from it at update 5.
        try (BaseLearner<Object> resumed = learner("jmx-resume", "learner"))
        {
            resumed.checkpoints().load(saved);
            assertEquals(5, resumed.trainIter());
        }
    }

    @Test
    void aSaveWithNoTrainingThreadShouldTimeOutAndNeverSaveLater() throws Exception
    {
        try (BaseLearner<Object> learner = learner("idle", "learner"))
        {
            final TimeoutException timeout = assertThrows(TimeoutException.class,
                () -> learner.control().saveCheckpoint(Duration.ofMillis(50)));
            assertTrue(timeout.getMessage().contains("the learner is not training"), timeout.getMessage());
            learner.train(List.of());
            assertFalse(Files.exists(learner.checkpoints().dir().resolve("iteration_0.pth.tar")));
            assertFalse(Files.exists(learner.checkpoints().dir().resolve("iteration_1.pth.tar")));
            // Asked on the thread that trains (here the test's own, after its train(); a hook's likewise), it would
            // wait out its own next boundary: refused at once, pointing at the direct save.
            final IllegalStateException own = assertThrows(IllegalStateException.class,
                () -> learner.control().saveCheckpoint(Duration.ofSeconds(30)));
            assertTrue(own.getMessage().contains("learner.checkpoints().save(name)"), own.getMessage());
        }
    }

    /** From a before_run hook (before any update boundary) a save is refused at once: it waited out its timeout. */
    @Test
    void aSaveAskedFromBeforeRunShouldBeRefusedAtOnce()
    {
        try (BaseLearner<Object> learner = learner("before-run", "learner"))
        {
            final java.util.concurrent.atomic.AtomicReference<Exception> thrown =
                new java.util.concurrent.atomic.AtomicReference<>();
            learner.registerHook(new org.ding4j.hook.LearnerHook("saver", 0, org.ding4j.hook.HookPosition.BEFORE_RUN)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext context)
                {
                    try
                    {
                        learner.control().saveCheckpoint(Duration.ofSeconds(30));
                    }
                    catch (final Exception ex)
                    {
                        thrown.set(ex);
                    }
                }
            });
            learner.registerHook(new org.ding4j.hook.LearnerHook("stopper", 0, org.ding4j.hook.HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext context)
                {
                    learner.stop();
                }
            });
            learner.run(new EndlessLoop(learner, () -> { }));
            assertTrue(thrown.get() instanceof IllegalStateException
                && thrown.get().getMessage().contains("learner.checkpoints().save(name)"),
                String.valueOf(thrown.get()));
        }
    }

    @Test
    void twoLearnersShouldGetTwoBeansAndTheSameNamesTwiceShouldBeRefused()
    {
        try (BaseLearner<Object> a = learner("two", "learner"); BaseLearner<Object> b = learner("two", "other");
             BaseLearner<Object> c = learner("two", "learner", new DistInfo(1, 2)))
        {
            final ObjectName first = LearnerMBean.register(a);
            final ObjectName second = LearnerMBean.register(b);
            assertFalse(first.equals(second));
            final IllegalStateException taken = assertThrows(IllegalStateException.class,
                () -> LearnerMBean.register(c));
            assertTrue(taken.getMessage().contains(first.toString()), taken.getMessage());
            // The refused learner's close must not take the first learner's bean with it.
            c.close();
            assertTrue(ManagementFactory.getPlatformMBeanServer().isRegistered(first));
        }
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        assertEquals(0, server.queryNames(LearnerMBean.objectName(learner("two", "learner")), null).size());
    }

    @Test
    void micrometerShouldReadTheCountersValuesAndPercentilesUntilTheLearnerCloses()
    {
        final MeterRegistry registry = new SimpleMeterRegistry();
        final BaseLearner<Object> learner = learner("micrometer", "learner");
        new LearnerMetrics(learner).bindTo(registry);
        for (int i = 0; i < 4; i++)
        {
            learner.train(List.of(), 10L * (i + 1));
        }
        final String exp = dir.resolve("micrometer").toString();
        // Reading the counter (a scrape) also binds the log vars the map policy registered on its first update.
        assertEquals(4.0, registry.get("ding4j.learner.updates").tag("experiment", exp).functionCounter().count());
        assertEquals(40.0, registry.get("ding4j.learner.env.steps").gauge().value());
        assertEquals(0.25, registry.get("ding4j.learner.value").tag("key", "total_loss").gauge().value(), 1e-12);
        final double p50 = registry.get("ding4j.learner.train.time").tag("percentile", "0.5").timeGauge()
            .value(TimeUnit.NANOSECONDS);
        final double p999 = registry.get("ding4j.learner.train.time").tag("percentile", "0.999").timeGauge()
            .value(TimeUnit.NANOSECONDS);
        assertTrue(p50 > 0 && p50 <= p999, p50 + " " + p999);
        assertEquals(0.0, registry.get("ding4j.learner.data.time").tag("percentile", "0.99").timeGauge()
            .value(TimeUnit.NANOSECONDS), "no batch waited for");
        // A second learner of the same names would share (and on its close remove) these meters: refused.
        try (BaseLearner<Object> twin = learner("micrometer", "learner", new DistInfo(1, 2)))
        {
            final IllegalStateException shared = assertThrows(IllegalStateException.class,
                () -> new LearnerMetrics(twin).bindTo(registry));
            assertTrue(shared.getMessage().contains("already"), shared.getMessage());
        }
        // A scrape that holds the counter and reads it as the learner closes binds no meter again (a key added since
        // the last bind would have been registered for good).
        final io.micrometer.core.instrument.FunctionCounter updates = registry.get("ding4j.learner.updates")
            .functionCounter();
        learner.logBuffer().scalar().register("late_key");
        learner.close();
        assertEquals(4.0, updates.count());
        assertTrue(registry.find("ding4j.learner.updates").meters().isEmpty());
        assertTrue(registry.getMeters().isEmpty(), registry.getMeters().toString());
        // A closed learner binds nothing and registers no bean: neither would ever be removed.
        assertThrows(IllegalStateException.class, () -> new LearnerMetrics(learner).bindTo(registry));
        assertTrue(registry.getMeters().isEmpty(), registry.getMeters().toString());
        assertThrows(IllegalStateException.class, () -> LearnerMBean.register(learner));
        assertEquals(0, ManagementFactory.getPlatformMBeanServer().queryNames(LearnerMBean.objectName(learner), null)
            .size());
    }
}
