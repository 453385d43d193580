package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.data.AsyncDataLoader;
import org.ding4j.data.DeviceTransfer;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.ScalarDict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stress runs of the hand-offs between threads that the javadoc promises (in {@code mvn -B test}, bounded in count
 * and time, each a few hundred ms): the log buffer's registration racing puts, the log_show reporter's slot hand-off,
 * the loader's close racing a waiting consumer, and a learner started again after a stop. Each failure mode named
 * in a test's message was reproduced on the code before this test: see the commit notes.
 */
class ConcurrencyStressTest
{
    @TempDir
    Path dir;

    @Test
    void putsShouldLandWhileOtherThreadsRegisterKeys() throws Exception
    {
        final ScalarDict dict = new ScalarDict();
        final int writers = 2;
        final CyclicBarrier go = new CyclicBarrier(writers + 2);
        final AtomicReference<String> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++)
        {
            final int key = dict.register("writer" + w);
            threads.add(new Thread(() -> {
                await(go);
                for (int i = 1; i <= 200_000 && null == failure.get(); i++)
                {
                    dict.put(key, i);
                    // The writer is the key's only writer and nobody clears: its own value must read back.
                    if (!dict.isPresent(key) || dict.value(key) != i)
                    {
                        failure.compareAndSet(null, "put " + i + " of key " + key + " was lost (read back "
                            + dict.isPresent(key) + " " + dict.value(key) + ") while keys were registered");
                    }
                }
            }, "writer-" + w));
        }
        // Two registrars race on the same names: each name must get one index, the same in both.
        final Map<String, Integer> seen = new ConcurrentHashMap<>();
        for (int r = 0; r < 2; r++)
        {
            threads.add(new Thread(() -> {
                await(go);
                for (int k = 0; k < 900 && null == failure.get(); k++)
                {
                    final String name = "k" + k;
                    final int index = dict.register(name);
                    final Integer other = seen.putIfAbsent(name, index);
                    if (null != other && other != index || !name.equals(dict.name(index)))
                    {
                        failure.compareAndSet(null, name + " registered as " + index + " and " + other + " ("
                            + dict.name(index) + ")");
                    }
                }
            }, "registrar-" + r));
        }
        threads.forEach(Thread::start);
        for (final Thread t : threads)
        {
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!t.isAlive(), t.getName() + " still running");
        }
        assertNull(failure.get());
        assertEquals(902, dict.keyCount());
        assertEquals(Set.copyOf(seen.values()).size(), 900, "900 names, 900 distinct indices");
    }

    @Test
    void aClearShouldNeverLetAnEarlierValueBack()
    {
        final ScalarDict dict = new ScalarDict(4);
        final int key = dict.register("x");
        // Sequential contract the concurrent one builds on: a cleared value stays cleared, a later put shows.
        for (int i = 0; i < 1000; i++)
        {
            dict.put(key, i);
            dict.clear();
            assertTrue(!dict.isPresent(key) && 0 == dict.count(), "value " + i + " survived a clear");
            dict.put(key, -i);
            assertEquals(-i, dict.value(key));
            assertEquals(1, dict.count());
        }
    }

    @Test
    void everyReportHandedToTheReporterShouldBeWrittenWhole()
    {
        final BaseLearnerTest.RecordingWriter writer = new BaseLearnerTest.RecordingWriter();
        final CountingPolicy policy = new CountingPolicy();
        final int iterations = 3000;
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=1"));
        final BaseLearner<Object> learner = new BaseLearner<>(cfg, policy, writer, DistInfo.single(),
            dir.resolve("reports").toString(), "learner");
        try (learner)
        {
            for (int i = 0; i < iterations; i++)
            {
                learner.train(List.of(), i);
            }
        }
        // total_loss is 1/update and log_show averages the monitor window (the last MONITOR_EXPIRE + 1 ticks): each
        // written report must carry its own iteration's average, none a value from another slot.
        int written = 0;
        for (final String event : writer.events)
        {
            if (event.startsWith("learner_iter/total_loss_avg@"))
            {
                final long step = Long.parseLong(event.substring(event.indexOf('@') + 1, event.indexOf('=')));
                final double value = Double.parseDouble(event.substring(event.indexOf('=') + 1));
                double sum = 0;
                final long from = Math.max(1, step - LearnerLog.MONITOR_EXPIRE);
                for (long k = from; k <= step; k++)
                {
                    sum += 1.0 / k;
                }
                assertEquals(sum / (step - from + 1), value, 1e-9, event);
                written++;
            }
        }
        assertTrue(written > 0 && written <= iterations, written + " reports");
        assertTrue(writer.closed, "close() drained the reporter and closed the writer");
    }

    @Test
    void closingTheLoaderShouldReleaseAWaitingConsumer() throws Exception
    {
        for (int round = 0; round < 50; round++)
        {
            final CountDownLatch sourceBlocked = new CountDownLatch(1);
            final AsyncDataLoader<Object> loader = new AsyncDataLoader<>(size -> {
                sourceBlocked.countDown();
                new CountDownLatch(1).await();
                return List.of();
            }, 4, DeviceTransfer.none(), 4, 0);
            final AtomicReference<Object> got = new AtomicReference<>("none");
            final Thread consumer = new Thread(() -> got.set(loader.next()), "consumer");
            consumer.start();
            assertTrue(sourceBlocked.await(10, TimeUnit.SECONDS));
            loader.close();
            consumer.join(TimeUnit.SECONDS.toMillis(10));
            assertTrue(!consumer.isAlive(), "round " + round + ": next() still waiting after close()");
            assertNull(got.get(), "round " + round);
            assertTrue(loader.isStopped(), "round " + round + ": the producer outlived close()");
        }
    }

    @Test
    void aLearnerStoppedOnceShouldStartAgain()
    {
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=1000"));
        final List<Long> stops = Collections.synchronizedList(new ArrayList<>());
        try (BaseLearner<Object> learner = new BaseLearner<>(cfg, new CountingPolicy(), null, DistInfo.single(),
            dir.resolve("restart").toString(), "learner"))
        {
            learner.dataSource(size -> List.of());
            learner.setupDataloader();
            final AtomicBoolean armed = new AtomicBoolean(true);
            learner.registerHook(new LearnerHook("stopper", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext context)
                {
                    if (0 == context.lastIter() % 5 && armed.get())
                    {
                        stops.add(context.lastIter());
                        learner.stop();
                    }
                }
            });
            assertEquals(RunOutcome.STOPPED, learner.start());
            assertEquals(5, learner.trainIter());
            assertEquals(RunOutcome.STOPPED, learner.start(), "the second start ran no update: " + stops);
            assertEquals(10, learner.trainIter(), "the stop that ended the first run ended the second at once");
        }
    }

    private static void await(final CyclicBarrier barrier)
    {
        try
        {
            barrier.await(10, TimeUnit.SECONDS);
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }
}
