package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Parallel mode: start() with the data loader, its failure, close and signal paths. */
class StartTest
{
    @TempDir
    Path dir;

    private BaseLearner learner(final CountingPolicy policy, final String... overrides)
    {
        return new BaseLearner(ConfigFiles.override(Config.empty(), List.of(overrides)), policy, null,
            DistInfo.single(), dir.toString(), "learner");
    }

    @Test
    void shouldTrainTrainIterationsBatchesFromTheLoaderAndRecordDataTime() throws IOException
    {
        final CountingPolicy policy = new CountingPolicy();
        final List<Boolean> dataTimeSeen = new ArrayList<>();
        try (BaseLearner learner = learner(policy, "train_iterations=7", "dataloader.num_workers=2",
            "dataloader.chunk_size=2"))
        {
            learner.registerHook(new org.ding4j.hook.LearnerHook("probe", 0, org.ding4j.hook.HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext l)
                {
                    dataTimeSeen.add(l.log().buffer().scalar().has("data_time"));
                }
            });
            learner.dataSource(CountingPolicy::chunk);
            learner.setupDataloader();
            learner.start();
            assertEquals(7, learner.trainIter());
            assertTrue(learner.learnerDone());
            assertTrue((Boolean)learner.learnInfo().toMap().get("learner_done"));
            assertEquals(List.of(true, true, true, true, true, true, true), dataTimeSeen);
            assertTrue(Files.exists(dir.resolve("ckpt/iteration_7.pth.tar")), "the after-run save");
        }
    }

    @Test
    void shouldTrainOnBatchesMovedToThePolicysDeviceOrThroughTheSourcesOwnTransfer()
    {
        // libtorch's meta device exists in every build: the loader's copy path runs for real without a GPU.
        final CountingPolicy policy = new CountingPolicy();
        policy.device = "meta";
        try (BaseLearner learner = learner(policy, "train_iterations=3"))
        {
            learner.dataSource(size -> List.of(torch.ones(size, 2)));
            learner.setupDataloader();
            learner.start();
            assertEquals(3, policy.trained.size());
            for (final Object batch : policy.trained)
            {
                assertTrue(((Tensor)((List<?>)batch).get(0)).device().is_meta(), "trained on a host batch");
            }
        }
        policy.trained.clear();
        try (BaseLearner learner = learner(policy, "train_iterations=3"))
        {
            learner.dataSource(size -> "host", batch -> batch + " on " + policy.device);
            learner.setupDataloader();
            learner.start();
            assertEquals(List.of("host on meta", "host on meta", "host on meta"), policy.trained);
        }
        policy.device = "cuda:0";
        try (BaseLearner learner = learner(policy))
        {
            learner.dataSource(size -> List.of());
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, learner::setupDataloader);
            assertTrue(ex.getMessage().startsWith("device: cuda:0 needs CUDA"), ex.getMessage());
        }
    }

    @Test
    void shouldSaveAnExceptionCheckpointRunAfterRunHooksAndRethrow() throws IOException
    {
        final IllegalStateException boom = new IllegalStateException("NaN loss");
        final CountingPolicy policy = new CountingPolicy()
        {
            @Override
            protected Map<String, Object> learn(final Object data)
            {
                if (3 == updates)
                {
                    throw boom;
                }
                return super.learn(data);
            }
        };
        try (BaseLearner learner = learner(policy))
        {
            learner.dataSource(size -> List.of());
            learner.setupDataloader();
            final IllegalStateException thrown = assertThrows(IllegalStateException.class, learner::start);
            assertSame(boom, thrown, "the failure is rethrown as it is");
            final Map<String, Object> saved =
                new TorchCheckpointIO().read(dir.resolve("ckpt/" + BaseLearner.EXCEPTION_CHECKPOINT));
            assertEquals(3L, saved.get("last_iter"));
            assertTrue(Files.exists(dir.resolve("ckpt/iteration_3.pth.tar")), "after_run still ran");
            assertFalse(learner.learnerDone());
        }
    }

    /**
     * A library inside someone else's process takes no signal: while run() trains, SIGTERM's handler is still the
     * one the process had (it was a ding4j handler for as long as run() ran).
     */
    @Test
    void runAloneShouldInstallNoSignalHandler() throws IOException
    {
        final sun.misc.Signal term = new sun.misc.Signal("TERM");
        final sun.misc.SignalHandler before = sun.misc.Signal.handle(term, sun.misc.SignalHandler.SIG_DFL);
        sun.misc.Signal.handle(term, before);
        final java.util.concurrent.atomic.AtomicReference<sun.misc.SignalHandler> during =
            new java.util.concurrent.atomic.AtomicReference<>();
        try (BaseLearner learner = learner(new CountingPolicy(), "train_iterations=3"))
        {
            learner.registerHook(new org.ding4j.hook.LearnerHook("probe", 200,
                org.ding4j.hook.HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext context)
                {
                    // Reads the current handler by swapping it out and back at once.
                    final sun.misc.SignalHandler current = sun.misc.Signal.handle(term,
                        sun.misc.SignalHandler.SIG_DFL);
                    sun.misc.Signal.handle(term, current);
                    during.set(current);
                }
            });
            learner.dataSource(CountingPolicy::chunk);
            learner.setupDataloader();
            learner.start();
        }
        assertTrue(null != during.get(), "the probe ran during the run");
        // sun.misc.Signal wraps the handler it returns anew each time; the wrapped one is named after the '<'.
        assertEquals(wrapped(before), wrapped(during.get()), "the process's own SIGTERM handler stays while run() "
            + "trains");
        assertFalse(wrapped(during.get()).contains("org.ding4j"), during.get().toString());
    }

    private static String wrapped(final sun.misc.SignalHandler handler)
    {
        final String text = handler.toString();
        return text.substring(Math.max(0, text.indexOf('<')));
    }

    @Test
    void shouldStopPromptlyWhenClosedWhileWaitingForData() throws Exception
    {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch afterRun = new CountDownLatch(1);
        final CountDownLatch waiting = new CountDownLatch(1);
        final CountDownLatch never = new CountDownLatch(1);
        final BaseLearner learner = learner(new CountingPolicy());
        learner.registerHook(new org.ding4j.hook.LearnerHook("running", 0, org.ding4j.hook.HookPosition.BEFORE_RUN)
        {
            @Override
            public void call(final org.ding4j.hook.HookContext context)
            {
                running.countDown();
            }
        });
        learner.registerHook(new org.ding4j.hook.LearnerHook("finished", 0, org.ding4j.hook.HookPosition.AFTER_RUN)
        {
            @Override
            public void call(final org.ding4j.hook.HookContext context)
            {
                afterRun.countDown();
            }
        });
        learner.dataSource(size -> {
            waiting.countDown();
            never.await();
            return List.of();
        });
        learner.setupDataloader();
        final CompletableFuture<RunOutcome> run = CompletableFuture.supplyAsync(learner::start);
        assertTrue(running.await(10, TimeUnit.SECONDS));
        assertTrue(waiting.await(10, TimeUnit.SECONDS));
        learner.close();
        assertEquals(0, afterRun.getCount(), "close() waits for the loop to end, after_run hooks included");
        assertEquals(RunOutcome.STOPPED, run.get(10, TimeUnit.SECONDS));
        assertEquals(0, learner.trainIter());
        assertTrue(learner.learnerDone(), "DI-engine sets learner_done when close() ends start()");
        assertThrows(IllegalStateException.class, learner::start, "a closed learner does not start again");
    }

    @Test
    void shouldFinishTheUpdateInFlightAndSaveAnInterruptCheckpointOnSigterm() throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(java, "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), SignalChild.class.getName(), dir.toString())
            .redirectErrorStream(true).start();
        long lastReported = -1;
        boolean returned = false;
        final List<String> output = new ArrayList<>();
        try (BufferedReader lines = new BufferedReader(
            new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            boolean signalled = false;
            while (null != (line = lines.readLine()))
            {
                output.add(line);
                if (line.startsWith("iteration "))
                {
                    lastReported = Long.parseLong(line.substring("iteration ".length()));
                    if (!signalled && lastReported >= 20)
                    {
                        // ProcessHandle.destroy() sends SIGTERM without closing our end of the pipe.
                        child.toHandle().destroy();
                        signalled = true;
                    }
                }
                returned |= "returned".equals(line);
            }
        }
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child exits after SIGTERM");
        assertEquals(0, child.exitValue(), () -> String.join("\n", output.subList(Math.max(0, output.size() - 20),
            output.size())));
        assertTrue(returned, "start() returned normally");
        final Map<String, Object> saved =
            new TorchCheckpointIO().read(dir.resolve("ckpt/" + BaseLearner.INTERRUPT_CHECKPOINT));
        assertEquals(lastReported, saved.get("last_iter"), "the checkpoint counts every completed update");
        assertEquals(lastReported, ((Map<?, ?>)saved.get("model")).get("updates"));
    }
}
