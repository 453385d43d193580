package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookException;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loop owns close (as Agrona's AgentRunner): a close from a hook or from another thread ends the loop after the
 * update in flight and the loop closes the resources after its after_run hooks; every resource is closed when one
 * fails; a throwing hook is named and the buffers are still cleared; K updates per call each get their own hooks and
 * train time.
 */
class LearnerCloseTest
{
    @TempDir
    Path dir;

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());

    private BaseLearner<Object> learner(final String exp, final CountingPolicy policy, final String... overrides)
    {
        final Config cfg = ConfigFiles.override(Config.empty(), List.of(overrides));
        return new BaseLearner<>(cfg, policy, null, DistInfo.single(), dir.resolve(exp).toString(), "learner");
    }

    /** Records its calls and its close into {@link #events}; may run an action on call or throw on close. */
    private final class Probe extends LearnerHook
    {
        private final Runnable onCall;
        private final RuntimeException closeFailure;

        Probe(final String name, final HookPosition position, final Runnable onCall,
            final RuntimeException closeFailure)
        {
            super(name, 0, position);
            this.onCall = onCall;
            this.closeFailure = closeFailure;
        }

        @Override
        public void call(final HookContext context)
        {
            events.add(name() + " " + context.lastIter());
            onCall.run();
        }

        @Override
        public void close()
        {
            events.add(name() + " closed");
            if (null != closeFailure)
            {
                throw closeFailure;
            }
        }
    }

    @Test
    void aCloseFromAHookShouldEndTheLoopAndCloseAfterTheAfterRunHooks()
    {
        final BaseLearner<Object> learner = learner("hook", new CountingPolicy());
        final AtomicReference<Runnable> close = new AtomicReference<>();
        learner.registerHook(new Probe("closer", HookPosition.AFTER_ITER, () -> {
            if (3 == learner.trainIter())
            {
                close.get().run();
            }
        }, null));
        learner.registerHook(new Probe("after_run", HookPosition.AFTER_RUN, () -> { }, null));
        close.set(learner::close);
        assertEquals(RunOutcome.STOPPED, learner.run(new EndlessLoop(learner, () -> { })));
        assertEquals(3, learner.trainIter(), "no update after the close");
        assertEquals(List.of("closer 1", "closer 2", "closer 3", "after_run 3"), events.subList(0, 4),
            "the hooks are closed by the loop, after after_run, not inside the hook that asked: " + events);
        assertEquals(java.util.Set.of("closer closed", "after_run closed"), java.util.Set.copyOf(events.subList(4, 6)));
        assertThrows(IllegalStateException.class, () -> learner.run(new EndlessLoop(learner, () -> { })), "closed");
        learner.close();
        assertEquals(6, events.size(), "closing twice closes nothing twice");
    }

    /** A run whose after_run hook fails logs that failure (the learner's text log), as one that fails earlier does. */
    @Test
    void anAfterRunFailureShouldBeLoggedBeforeItIsThrown() throws Exception
    {
        final BaseLearner<Object> learner = learner("after-run", new CountingPolicy());
        final IllegalStateException broken = new IllegalStateException("after_run broke");
        learner.registerHook(new Probe("stopper", HookPosition.AFTER_ITER, learner::stop, null));
        learner.registerHook(new LearnerHook("breaks", 0, HookPosition.AFTER_RUN)
        {
            @Override
            public void call(final HookContext context)
            {
                throw broken;
            }
        });
        assertThrows(RuntimeException.class, () -> learner.run(new EndlessLoop(learner, () -> { })));
        final java.nio.file.Path log = learner.log().file();
        learner.close();
        final String text = java.nio.file.Files.readString(log);
        assertTrue(text.contains("after_run failed at iteration 1") && text.contains("after_run broke"), text);
    }

    /**
     * A close from an after_iter hook of a train() loop (no run()) closes at once, and log_show, later in the same
     * dispatch, must not start a reporter thread that nothing would stop (it did, for good).
     */
    @Test
    void aCloseFromAHookOfATrainLoopShouldLeaveNoReporterThread()
    {
        final BaseLearner<Object> learner = learner("train-close", new CountingPolicy(),
            "hook.log_show_after_iter=1");
        learner.registerHook(new Probe("closer", HookPosition.AFTER_ITER, () -> {
            if (1 == learner.trainIter())
            {
                learner.close();
            }
        }, null));
        // Another test's learner of the same name may still be ending its own reporter: only a new one counts.
        final java.util.function.Predicate<Thread> reporter = t -> t.isAlive()
            && t.getName().startsWith("ding4j-log-" + learner.instanceName());
        final java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
        learner.train(List.of());
        assertTrue(Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t)).noneMatch(reporter),
            "a reporter thread outlived the closed learner");
    }

    @Test
    void aCloseFromAnotherThreadShouldWaitForTheUpdateInFlightEvenWhenInterrupted() throws Exception
    {
        final BaseLearner<Object> learner = learner("thread", new CountingPolicy());
        learner.registerHook(new Probe("probe", HookPosition.AFTER_RUN, () -> { }, null));
        final CountDownLatch inUpdate = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch closeReturned = new CountDownLatch(1);
        final Thread training = new Thread(() -> learner.run(new EndlessLoop(learner, () -> {
            if (0 == learner.trainIter())
            {
                inUpdate.countDown();
                await(release);
            }
        })), "training");
        training.start();
        assertTrue(inUpdate.await(10, TimeUnit.SECONDS));
        final Thread closer = new Thread(() -> {
            learner.close();
            closeReturned.countDown();
        }, "closer");
        closer.start();
        // Interrupting the waiting closer makes it return, but nothing may be closed under the running update.
        closer.interrupt();
        assertTrue(closeReturned.await(10, TimeUnit.SECONDS));
        assertFalse(events.contains("probe closed"), "closed under a running update: " + events);
        release.countDown();
        training.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(training.isAlive());
        assertEquals(List.of("probe 1", "probe closed"), events, "the loop ran after_run, then closed");
        assertEquals(1, learner.trainIter(), "the update in flight finished; none followed");
    }

    private static void await(final CountDownLatch latch)
    {
        try
        {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        }
        catch (final InterruptedException ex)
        {
            throw new AssertionError(ex);
        }
    }

    @Test
    void everyResourceShouldBeClosedWhenOneFailsAndTheFailuresKept()
    {
        final BaseLearner<Object> learner = learner("failing", new CountingPolicy());
        final IllegalStateException first = new IllegalStateException("first");
        final IllegalStateException second = new IllegalStateException("second");
        learner.registerHook(new Probe("a", HookPosition.AFTER_ITER, () -> { }, first));
        learner.registerHook(new Probe("b", HookPosition.AFTER_RUN, () -> { }, second));
        learner.registerHook(new Probe("c", HookPosition.AFTER_RUN, () -> { }, null));
        learner.train(List.of());
        final HookException ex = assertThrows(HookException.class, learner::close);
        // Hooks close position by position (after_run before after_iter): b fails first, a's failure is kept too.
        assertEquals("b", ex.hookName());
        assertSame(second, ex.getCause());
        assertEquals(1, ex.getSuppressed().length);
        assertEquals("a", ((HookException)ex.getSuppressed()[0]).hookName());
        assertSame(first, ex.getSuppressed()[0].getCause());
        assertTrue(events.containsAll(List.of("a closed", "b closed", "c closed")), events.toString());
        learner.close();
        assertEquals(3, events.stream().filter(e -> e.endsWith("closed")).count(), "closing twice is harmless");
    }

    @Test
    void aThrowingHookShouldBeNamedAndTheBuffersStillCleared()
    {
        try (BaseLearner<Object> learner = learner("throwing", new CountingPolicy()))
        {
            learner.registerHook(new Probe("boom", HookPosition.AFTER_ITER, () -> {
                throw new IllegalArgumentException("no");
            }, null));
            final HookException ex = assertThrows(HookException.class, () -> learner.train(List.of()));
            assertEquals("boom", ex.hookName());
            assertTrue(ex.getMessage().startsWith("hook boom (after_iter) failed"), ex.getMessage());
            assertEquals(0, learner.logBuffer().scalar().count(), "the failed update's vars were left in the buffer");
        }
    }

    @Test
    void eachOfSeveralUpdatesPerCallShouldHaveItsOwnHooksTrainTimeAndPolicyState()
    {
        final List<Long> updatesSeen = new ArrayList<>();
        final List<Double> trainTimes = new ArrayList<>();
        final CountingPolicy policy = new CountingPolicy()
        {
            @Override
            protected Map<String, Object> learn(final Object data)
            {
                // Update k costs k * 5 ms (a busy wait: its train_time is what is measured, not a synchronisation).
                final long until = System.nanoTime() + (updates + 1) * 5_000_000L;
                while (System.nanoTime() < until)
                {
                    Thread.onSpinWait();
                }
                return super.learn(data);
            }
        };
        policy.updatesPerCall = 3;
        try (BaseLearner<Object> learner = learner("several", policy, "hook.log_show_after_iter=1000"))
        {
            learner.registerHook(new Probe("before", HookPosition.BEFORE_ITER, () -> { }, null));
            learner.registerHook(new Probe("after", HookPosition.AFTER_ITER, () -> {
                updatesSeen.add(policy.updates);
                trainTimes.add(learner.logBuffer().scalar().get("train_time"));
            }, null));
            learner.train(List.of());
            assertEquals(List.of("before 0", "after 1", "before 1", "after 2", "before 2", "after 3"), events);
            assertEquals(List.of(1L, 2L, 3L), updatesSeen, "after_iter sees the policy between updates");
            for (int k = 0; k < 3; k++)
            {
                assertTrue(trainTimes.get(k) >= (k + 1) * 0.005, "update " + (k + 1) + "'s train_time " + trainTimes);
            }
        }
    }
    /** A checkpoint's name is a file name in the learner's folder: a path out of it is refused, naming it. */
    @Test
    void aCheckpointNameShouldStayInsideTheFolder() throws Exception
    {
        try (BaseLearner<Object> learner = learner("names", new CountingPolicy()))
        {
            for (final String name : List.of(dir.resolve("outside.pth.tar").toString(), "sub/x.pth.tar", "..", ""))
            {
                final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                    () -> learner.checkpoints().save(name));
                assertTrue(ex.getMessage().startsWith("checkpoint file name: expected a plain file name inside "),
                    ex.getMessage());
            }
            assertEquals(learner.checkpoints().dir().resolve("ok.pth.tar"), learner.checkpoints().save("ok.pth.tar"));
        }
        assertFalse(java.nio.file.Files.exists(dir.resolve("outside.pth.tar")));
    }

    /**
     * A stop asked before a run gets going (the thread that starts it calls stop() a moment later) ends that run at
     * once; the run takes the stop with it, so the next run trains.
     */
    @Test
    void aStopBeforeTheRunShouldEndItAndNotTheNext()
    {
        final BaseLearner<Object> learner = learner("early", new CountingPolicy());
        learner.stop();
        assertEquals(RunOutcome.STOPPED, learner.run(new EndlessLoop(learner, () -> { })));
        assertEquals(0, learner.trainIter());
        assertEquals(RunOutcome.STOPPED, learner.run(new EndlessLoop(learner, () -> {
            if (2 == learner.trainIter())
            {
                learner.stop();
            }
        })));
        assertEquals(3, learner.trainIter(), "the second run trained until its own stop");
        learner.close();
    }

    /**
     * An application's own train() loop, paused, is let go by close() from another thread (its next train() is
     * refused as closed).
     */
    @Test
    void closeShouldReleaseAPausedOwnLoopAndRefuseTrainingAfter() throws Exception
    {
        final BaseLearner<Object> learner = learner("own", new CountingPolicy());
        learner.train(List.of());
        learner.control().pause();
        final AtomicReference<Throwable> ended = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(1);
        final Thread own = new Thread(() -> {
            try
            {
                learner.train(List.of());
            }
            catch (final RuntimeException ex)
            {
                ended.set(ex);
            }
            done.countDown();
        }, "own-loop");
        own.start();
        learner.close();
        assertTrue(done.await(10, TimeUnit.SECONDS), "the paused train() is let go by close()");
        assertTrue(ended.get() instanceof IllegalStateException && ended.get().getMessage().endsWith("is closed"),
            String.valueOf(ended.get()));
        assertThrows(IllegalStateException.class, () -> learner.train(List.of()));
        assertEquals(1, learner.trainIter());
    }
}
