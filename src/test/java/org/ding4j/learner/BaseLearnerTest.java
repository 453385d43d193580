package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookException;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.SummaryWriter;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.policy.PriorityFeedback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DI-engine's test_base_learner.py scenarios, adapted to completed-update counting. */
class BaseLearnerTest
{
    @TempDir
    Path dir;

    private BaseLearner learner(final String exp, final String... overrides)
    {
        return learner(exp, new CountingPolicy(), overrides);
    }

    private BaseLearner learner(final String exp, final CountingPolicy policy, final String... overrides)
    {
        final Config cfg = ConfigFiles.override(Config.empty(), List.of(overrides));
        return new BaseLearner(cfg, policy, null, DistInfo.single(), dir.resolve(exp).toString(), "learner");
    }

    private Set<String> checkpoints(final String exp) throws IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve(exp).resolve("ckpt")))
        {
            return files.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void shouldSaveIterationCheckpointsThatHoldExactlyTheirUpdatesAndResumeWithTheNextOne() throws IOException
    {
        try (BaseLearner first = learner("first", "hook.save_ckpt_after_iter=5", "hook.log_show_after_iter=5"))
        {
            first.callHook(HookPosition.BEFORE_RUN);
            for (int i = 0; i < 5; i++)
            {
                first.train(List.of(), i * 10);
            }
            assertEquals(Set.of("iteration_5.pth.tar"), checkpoints("first"));
            final Map<String, Object> saved = first.checkpoints().io()
                .read(first.checkpoints().dir().resolve("iteration_5.pth.tar"));
            assertEquals(5L, saved.get("last_iter"));
            assertEquals(40L, saved.get("last_step"));
            assertEquals(5L, ((Map<?, ?>)saved.get("model")).get("updates"), "iteration_5 holds exactly 5 updates");
        }

        final CountingPolicy resumed = new CountingPolicy();
        final String ckpt = dir.resolve("first/ckpt/iteration_5.pth.tar").toString();
        try (BaseLearner second = learner("second", resumed, "hook.save_ckpt_after_iter=5",
            "hook.load_ckpt_before_run=" + ckpt))
        {
            second.callHook(HookPosition.BEFORE_RUN);
            assertEquals(5, second.trainIter());
            assertEquals(40, second.collectorEnvstep());
            assertEquals(5, resumed.updates);
            for (int i = 0; i < 10; i++)
            {
                second.train(List.of());
            }
            second.callHook(HookPosition.AFTER_RUN);
            assertEquals(15, second.trainIter());
            assertEquals(Set.of("iteration_10.pth.tar", "iteration_15.pth.tar"), checkpoints("second"),
                "not 0, 4, 7, 12: resumed at 5, saved at 10 and 15 (and the after-run save at 15)");
        }
    }

    @Test
    void shouldReportLearnInfoAndPriorityWithReplayIds()
    {
        final CountingPolicy policy = new CountingPolicy();
        policy.withPriority = true;
        try (BaseLearner learner = learner("info", policy))
        {
            final List<Map<String, Object>> batch = List.of(
                Map.of("replay_buffer_idx", 3, "replay_unique_id", 11L),
                Map.of("replay_buffer_idx", 7, "replay_unique_id", 12L));
            learner.train(batch, 100);
            final Map<String, Object> info = learner.learnInfo().toMap();
            assertEquals(List.of("learner_step", "priority_info", "learner_done"), new ArrayList<>(info.keySet()));
            assertEquals(1L, info.get("learner_step"));
            assertEquals(false, info.get("learner_done"));
            final Map<?, ?> priority = (Map<?, ?>)info.get("priority_info");
            assertEquals(List.of(0.5, 0.25), priority.get("priority"));
            assertEquals(List.of(3, 7), priority.get("replay_buffer_idx"));
            assertEquals(List.of(11L, 12L), priority.get("replay_unique_id"));
            assertEquals(100, learner.collectorEnvstep());
        }
    }

    @Test
    void priorityInfoShouldHoldOneIdPerDataItemWhateverTheNumberOfPriorities()
    {
        // DI-engine's scenario: 2 data items, the policy returns 3 priority values.
        final CountingPolicy policy = new CountingPolicy()
        {
            @Override
            protected Map<String, Object> learn(final Object data)
            {
                final Map<String, Object> vars = super.learn(data);
                vars.put("priority", List.of(0.5, 0.25, 0.125));
                return vars;
            }
        };
        try (BaseLearner learner = learner("parity", policy))
        {
            learner.train(List.of(Map.of("replay_buffer_idx", 3, "replay_unique_id", 11L),
                Map.of("replay_buffer_idx", 7, "replay_unique_id", 12L)));
            final Map<?, ?> priority = (Map<?, ?>)learner.learnInfo().toMap().get("priority_info");
            assertEquals(List.of(0.5, 0.25, 0.125), priority.get("priority"));
            assertEquals(List.of(3, 7), priority.get("replay_buffer_idx"));
            assertEquals(List.of(11L, 12L), priority.get("replay_unique_id"));
            assertEquals(3, learner.priorities().count());
            assertEquals(2, learner.priorities().itemCount());
        }
    }

    @Test
    void shouldRouteLogVarsAndHaveTrainTimeBeforeAfterIterHooks()
    {
        final CountingPolicy policy = new CountingPolicy();
        policy.updatesPerCall = 3;
        final List<String> seen = new ArrayList<>();
        try (BaseLearner learner = learner("route", policy, "hook.log_show_after_iter=1000"))
        {
            learner.registerHook(new LearnerHook("probe", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    final LogBuffer buffer = l.log().buffer();
                    seen.add(l.lastIter() + ":" + buffer.scalar().has("train_time") + ":"
                        + buffer.scalar().has("total_loss") + ":" + buffer.scalars().get("q") + ":"
                        + buffer.histogram().get("td").length);
                }
            });
            learner.train(List.of());
            assertEquals(3, learner.trainIter(), "a list of three maps is three updates");
            assertEquals(List.of("1:true:true:{a=1.0, b=2.0}:3", "2:true:true:{a=1.0, b=2.0}:3",
                "3:true:true:{a=1.0, b=2.0}:3"), seen);
        }
    }

    @Test
    void shouldRejectAPolicyResultOfAnotherTypeAndTrainingWithoutAPolicy()
    {
        try (BaseLearner learner = new BaseLearner(null, null, null, DistInfo.single(), dir.resolve("x").toString(),
            "learner"))
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> learner.train(List.of()));
            assertTrue(ex.getMessage().contains("please set learner policy"));
            learner.policy(new CountingPolicy()
            {
                @Override
                protected Map<String, Object> learn(final Object data)
                {
                    return null;
                }
            });
            final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> learner.train(List.of()));
            assertEquals("policy.learn returned null; expected the Map of one update's log vars (for several updates "
                + "per call, override updatesPerCall: each update then gets its own hooks and train_time)",
                bad.getMessage());
        }
    }

    @Test
    void shouldLogAveragesAndWriteSummariesEveryFreqIterationsThenClearTheBuffers() throws IOException
    {
        final RecordingWriter writer = new RecordingWriter();
        final BaseLearner learner = new BaseLearner(
            ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=2")), new CountingPolicy(), writer,
            DistInfo.single(), dir.resolve("show").toString(), "learner");
        try (learner)
        {
            for (int i = 0; i < 4; i++)
            {
                learner.train(List.of(), 7);
            }
            assertEquals(0, learner.logBuffer().scalar().count(), "the learner clears the buffers after after_iter");
            assertEquals(4, learner.log().monitor().time());
        }
        // The reporter thread writes the summaries; close() drains it before closing the writer.
        // Percentiles cover the samples since the reporter last wrote: the first report has some, later ones may not.
        final List<String> latencyTags = writer.events.stream().filter(e -> e.contains("train_time_"))
            .map(e -> e.substring(0, e.indexOf('@') + 2)).toList();
        assertEquals(List.of("learner_iter/train_time_p50_ms@2", "learner_step/train_time_p50_ms@7",
            "learner_iter/train_time_p99_ms@2", "learner_step/train_time_p99_ms@7", "learner_iter/train_time_max_ms@2",
            "learner_step/train_time_max_ms@7"), latencyTags.subList(0, 6));
        writer.events.removeIf(e -> e.contains("train_time_"));
        assertEquals(4, learner.log().latency().total("train_time").getTotalCount());
        assertEquals(List.of(
            "learner_iter/cur_lr_avg@2=0.1", "learner_step/cur_lr_avg@7=0.1",
            "learner_iter/total_loss_avg@2=0.75", "learner_step/total_loss_avg@7=0.75", "learner/td@2#3",
            "learner_iter/cur_lr_avg@4=0.1", "learner_step/cur_lr_avg@7=0.1",
            "learner_iter/total_loss_avg@4=0.5208333333333333", "learner_step/total_loss_avg@7=0.5208333333333333",
            "learner/td@4#3"), writer.events);
        assertTrue(writer.closed, "close() closes the summary writer");
        final String text = Files.readString(learner.log().file());
        assertTrue(learner.log().file().endsWith(Path.of("show/log/learner/learner_logger.txt")));
        assertTrue(text.contains("[RANK0]: === Training Iteration 2 Result ==="), text);
        assertTrue(text.contains("| Name  | cur_lr_avg | total_loss_avg | train_time_p50_ms |"), text);
        assertTrue(text.contains("| Value | 0.100000   | 0.750000       |"), text);
    }

    @Test
    void shouldWriteTensorBoardEventsByDefaultOnRankZero() throws IOException
    {
        try (BaseLearner learner = learner("tb", "hook.log_show_after_iter=1"))
        {
            learner.train(List.of());
        }
        final Path folder = dir.resolve("tb/log/learner/learner_tb_logger");
        try (Stream<Path> files = Files.list(folder))
        {
            final Path events = files.findFirst().orElseThrow();
            assertTrue(events.getFileName().toString().startsWith("events.out.tfevents."));
            assertTrue(Files.size(events) > 100, "the iteration's scalars were written on close");
        }
    }

    @Test
    void shouldGiveMonitorsOnlyToMonitoringRanks()
    {
        final Config base = Config.empty();
        try (BaseLearner rank1 = new BaseLearner(base, new CountingPolicy(), new RecordingWriter(), new DistInfo(1, 2),
            dir.resolve("r").toString(), "learner"))
        {
            assertNull(rank1.log().monitor());
            assertNull(rank1.log().tbLogger());
            assertNotNull(rank1.hooks().find(HookPosition.AFTER_ITER, "log_reduce_after_iter"),
                "world size > 1 adds log_reduce");
            final HookException ex = assertThrows(HookException.class, () -> rank1.train(List.of()));
            assertEquals("log_reduce_after_iter", ex.hookName());
            assertTrue(ex.getCause().getMessage().contains("world size 2 needs a log reducer"), ex.getMessage());
        }
        try (BaseLearner multitask = new BaseLearner(Config.of(Map.of("is_multitask_pipeline", true)),
            new CountingPolicy(), null, new DistInfo(1, 2), dir.resolve("m").toString(), "learner"))
        {
            assertNotNull(multitask.log().monitor(), "a multitask pipeline monitors every rank");
        }
    }

    @Test
    void shouldSaveANamedCheckpointOnlyThroughTheAfterRunHook() throws IOException
    {
        try (BaseLearner learner = learner("named"))
        {
            learner.train(List.of());
            learner.saveCheckpoint("ckpt_best.pth.tar");
            assertNull(learner.checkpoints().nameOverride());
            assertEquals(Set.of("ckpt_best.pth.tar"), checkpoints("named"));
        }
        try (BaseLearner learner = learner("none", "hook.save_ckpt_after_run=false"))
        {
            assertNull(learner.hooks().find(HookPosition.AFTER_RUN, "save_ckpt_after_run"),
                "false builds no hook (DI-engine builds one anyway)");
            final IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> learner.saveCheckpoint("x.pth.tar"));
            assertTrue(ex.getMessage().contains("save_ckpt_after_run"));
        }
    }

    @Test
    void shouldTakeAFullFormHookUnderASimplifiedKeyAsDiEngineDoes() throws IOException
    {
        // DI-engine's own test config writes save_ckpt_after_iter as a dict; any dict is a full form there.
        try (BaseLearner learner = learner("fullform", "hook.save_ckpt_after_iter={name: save_ckpt_after_iter, "
            + "type: save_ckpt, priority: 20, position: after_iter, ext_args: {freq: 2}}"))
        {
            for (int i = 0; i < 5; i++)
            {
                learner.train(List.of());
            }
            assertEquals(Set.of("iteration_2.pth.tar", "iteration_4.pth.tar"), checkpoints("fullform"));
        }
    }

    @Test
    void shouldReadTensorLogVarsAsDiEngineDoes()
    {
        // DI-engine's LogDict calls tolist(): a 0-d tensor is a number, another tensor a list (a histogram here).
        final List<String> seen = new ArrayList<>();
        final CountingPolicy policy = new CountingPolicy()
        {
            @Override
            protected Map<String, Object> learn(final Object data)
            {
                return Map.of("total_loss", torch.ones(3).sum(), "[histogram]td", torch.ones(2, 2),
                    "cur_lr", 0.1);
            }
        };
        try (BaseLearner learner = learner("tensors", policy))
        {
            learner.registerHook(new LearnerHook("probe", 100, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    final LogBuffer buffer = l.log().buffer();
                    seen.add(buffer.scalar().get("total_loss") + ":"
                        + java.util.Arrays.toString(buffer.histogram().get("td")));
                }
            });
            learner.train(List.of());
            assertEquals(List.of("3.0:[1.0, 1.0, 1.0, 1.0]"), seen);
            learner.policy(new CountingPolicy()
            {
                @Override
                protected Map<String, Object> learn(final Object data)
                {
                    return Map.of("total_loss", torch.ones(2));
                }
            });
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> learner.train(List.of()));
            assertEquals("log var total_loss: expected a number (a 0-d tensor), got a tensor of shape [2]",
                ex.getMessage());
        }
    }

    @Test
    void shouldRefuseCheckpointCountersThatCannotBeCountsBeforeChangingAnything() throws IOException
    {
        final Map<Object, String> bad = new java.util.LinkedHashMap<>();
        bad.put(-5L, "last_iter: expected an integer in [0, 2^53], got -5");
        bad.put("abc", "last_iter: expected an integer in [0, 2^53], got 'abc'");
        bad.put(2.5, "last_iter: expected an integer in [0, 2^53], got 2.5");
        // 2^62 once named its next save iteration_4611686018427387904.pth.tar.
        bad.put(1L << 62, "last_iter: expected an integer in [0, 2^53], got 4611686018427387904");
        int i = 0;
        for (final Map.Entry<Object, String> entry : bad.entrySet())
        {
            final Path file = dir.resolve("bad_counter_" + i++ + ".pth.tar");
            new org.ding4j.checkpoint.TorchCheckpointIO().write(file, Map.of("model", Map.of("updates", 3L),
                "last_iter", entry.getKey(), "last_step", 7L));
            final CountingPolicy policy = new CountingPolicy();
            try (BaseLearner learner = learner("counter" + i, policy, "hook.load_ckpt_before_run=" + file))
            {
                final HookException ex = assertThrows(HookException.class,
                    () -> learner.callHook(HookPosition.BEFORE_RUN));
                assertTrue(ex.getCause().getMessage().endsWith(entry.getValue()), ex.getCause().getMessage());
                assertEquals(0, learner.trainIter(), "nothing restored");
                assertEquals(0, policy.updates, "the policy's state untouched");
            }
        }
    }

    @Test
    void shouldWriteTheEffectiveConfigNextToTheRun()
    {
        try (BaseLearner learner = learner("cfg", "hook.log_show_after_iter=20"))
        {
            final Config written = ConfigFiles.load(dir.resolve("cfg/config.yaml"));
            assertEquals(20L, written.getLong("learner.hook.log_show_after_iter"));
            assertEquals(1_000_000_000L, written.getLong("learner.train_iterations"));
            assertSame(learner.config().get("hook"), learner.config().get("hook"));
        }
    }

    @Test
    void shouldFailAtConstructionOnEveryBadConfigValue()
    {
        assertConfigError("learner.hook.save_ckpt_after_iter: expected a positive integer, got -5",
            "hook.save_ckpt_after_iter=-5");
        assertConfigError("learner.hook.log_show_after_iter: expected a positive integer, got 0",
            "hook.log_show_after_iter=0");
        assertConfigError("learner.train_iterations: expected a positive integer, got -1", "train_iterations=-1");
        assertConfigError("learner.dataloader.num_workers: expected a non-negative integer, got -2",
            "dataloader.num_workers=-2");
        assertConfigError("learner.dataloader.chunk_size: expected a positive integer, got 0",
            "dataloader.chunk_size=0");
        assertConfigError("learner.log_policy: expected a boolean, got \"yes please\"", "log_policy=yes please");
        assertConfigError("learner.batch_size: unknown key", "batch_size=3");
        assertConfigError("learner.hook.save_ckpt_after_run: expected a boolean, got 3", "hook.save_ckpt_after_run=3");
        assertConfigError("learner.hook.mine.position: hook position: expected one of [before_run, after_run, "
            + "before_iter, after_iter], got after_step", "hook.mine={type: log_show, position: after_step}");
        assertConfigError("learner.hook.mine: hook mine: unknown type nope (known: [", "hook.mine={type: nope, "
            + "position: after_iter}");
        assertConfigError("learner.hook.mine.priority: expected an integer >= 0, got -1",
            "hook.mine={type: log_show, position: after_iter, priority: -1}");
        assertConfigError("learner.hook.mine: ext_args.freq: expected a positive integer, got -3",
            "hook.mine={type: save_ckpt, position: after_iter, ext_args: {freq: -3}}");
    }

    @Test
    void shouldBuildLearnersByRegisteredTypeAndListTheKnownOnes()
    {
        final Config cfg = Config.of(Map.of("type", "base"));
        try (BaseLearner learner = LearnerRegistry.createLearner(cfg, null, null, DistInfo.single(),
            dir.resolve("reg").toString(), "learner"))
        {
            assertEquals(BaseLearner.class, learner.getClass());
        }
        final ConfigException unknown = assertThrows(ConfigException.class, () -> LearnerRegistry.createLearner(
            Config.of(Map.of("type", "fancy")), null, null, DistInfo.single(), dir.toString(), "learner"));
        assertTrue(unknown.getMessage().startsWith("learner.type: unknown learner type \"fancy\" (known types: [base"),
            unknown.getMessage());
        final ConfigException missing = assertThrows(ConfigException.class, () -> LearnerRegistry.createLearner(
            Config.of(Map.of("import_names", List.of("no.such.Module"))), null, null, DistInfo.single(),
            dir.toString(), "learner"));
        assertEquals("learner.import_names[0]: cannot load class no.such.Module", missing.getMessage());
    }

    @Test
    void shouldReportAFailingHookByNameAndPosition()
    {
        try (BaseLearner learner = learner("fail"))
        {
            learner.registerHook(new LearnerHook("exploder", 50, HookPosition.BEFORE_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    throw new IllegalStateException("boom");
                }
            });
            final HookException ex = assertThrows(HookException.class, () -> learner.train(List.of()));
            assertEquals("exploder", ex.hookName());
            assertEquals(HookPosition.BEFORE_ITER, ex.position());
            assertEquals("hook exploder (before_iter) failed: java.lang.IllegalStateException: boom", ex.getMessage());
            assertEquals(0, learner.trainIter());
        }
    }

    @Test
    void shouldTakeLogVarsAndPrioritiesFromATypedPolicyByIndex()
    {
        final double[] priorities = {0.3, 0.7, 0.9};
        final int[] slots = {4, 5, 6};
        final long[] ids = {40, 50, 60};
        final Policy<String> policy = new LossPolicy(2)
        {
            private double step;

            @Override
            public void forward(final String batch, final LogSink sink)
            {
                step++;
                sink.put(loss, 1.0 / step);
                sink.priority(priorities, slots, ids, 2);
            }
        };
        final List<Double> losses = new ArrayList<>();
        try (BaseLearner<String> learner = new BaseLearner<>(
            ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=1")), policy, null,
            DistInfo.single(), dir.resolve("sink").toString(), "learner"))
        {
            learner.registerHook(new LearnerHook("probe", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    losses.add(l.log().buffer().scalar().get("total_loss"));
                }
            });
            assertEquals(-1, learner.priorities().count(), "no priorities before an update reports them");
            learner.train("batch");
            learner.train("batch");
            assertEquals(List.of(1.0, 0.5), losses);
            assertEquals(0.75, learner.log().monitor().avg("total_loss"));
            final PriorityFeedback feedback = learner.priorities();
            assertEquals(2, feedback.count());
            assertEquals(0.7, feedback.value(1));
            assertEquals(5, feedback.slot(1));
            assertEquals(50L, feedback.id(1));
            final PriorityInfo info = learner.learnInfo().priorityInfo();
            assertArrayEquals(new double[] {0.3, 0.7}, info.priority());
            assertArrayEquals(new long[] {40, 50}, info.replayUniqueId());
        }
    }

    /**
     * A policy whose one call runs four updates at once (PPO's rollout in one native call) and says so with
     * {@code shareTime}: each of the four gets a quarter of the call's time as its train_time, not the first all of
     * it and the others the moments between their reports.
     */
    @Test
    void updatesOfOneCallShouldShareItsTimeWhenThePolicySaysSo()
    {
        final Policy<String> policy = new LossPolicy(1)
        {
            @Override
            public void forward(final String batch, final LogSink sink)
            {
                // The work of all four updates, done at once: at least a millisecond of it.
                final long until = System.nanoTime() + 1_000_000;
                double x = 0;
                while (System.nanoTime() < until)
                {
                    x += Math.sqrt(x + 1);
                }
                sink.shareTime(4);
                for (int k = 0; k < 4; k++)
                {
                    if (k > 0)
                    {
                        sink.nextUpdate();
                    }
                    sink.put(loss, x);
                }
            }
        };
        final List<Double> times = new ArrayList<>();
        try (BaseLearner<String> learner = new BaseLearner<>(Config.empty(), policy, null, DistInfo.single(),
            dir.resolve("shared").toString(), "learner"))
        {
            learner.registerHook(new LearnerHook("probe", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    times.add(l.log().buffer().scalar().get("train_time"));
                }
            });
            learner.train("batch");
            assertEquals(4, learner.trainIter());
        }
        assertEquals(4, times.size());
        assertTrue(times.get(0) >= 0.25e-3, "a quarter of at least 1 ms: " + times);
        assertEquals(List.of(times.get(0), times.get(0), times.get(0), times.get(0)), times, "equal shares");
    }

    @Test
    void shouldLetHooksAtAnyPrioritySeeTheIterationsLogVars()
    {
        final List<String> seen = new ArrayList<>();
        try (BaseLearner learner = learner("late", "hook.log_show_after_iter=1"))
        {
            // log_show runs at priority 20; a user's hook at the default 100 runs after it.
            learner.registerHook(new LearnerHook("late_reader", 100, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    final LogBuffer buffer = l.log().buffer();
                    seen.add(buffer.scalar().has("total_loss") + ":" + buffer.scalar().has("train_time") + ":"
                        + buffer.histogram().containsKey("td"));
                }
            });
            for (int i = 0; i < 3; i++)
            {
                learner.train(List.of());
            }
            assertEquals(List.of("true:true:true", "true:true:true", "true:true:true"), seen);
            assertEquals(0, learner.logBuffer().scalar().count(), "cleared after the last after_iter hook");
        }
    }

    private void assertConfigError(final String expectedPrefix, final String override)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> learner("bad", override).close());
        assertTrue(ex.getMessage().startsWith(expectedPrefix),
            () -> "message \"" + ex.getMessage() + "\" does not start with " + expectedPrefix);
        assertFalse(Files.exists(dir.resolve("bad/config.yaml")), "a bad config writes nothing");
    }

    /** Records summaries as text; the TensorBoard writer itself is not under test here. */
    static final class RecordingWriter implements SummaryWriter
    {
        final List<String> events = new ArrayList<>();
        boolean closed;

        @Override
        public void addScalar(final String tag, final double value, final long step)
        {
            events.add(tag + "@" + step + "=" + value);
        }

        @Override
        public void addHistogram(final String tag, final double[] values, final long step)
        {
            events.add(tag + "@" + step + "#" + values.length);
        }

        @Override
        public void flush()
        {
        }

        @Override
        public void close()
        {
            closed = true;
        }
    }

    /** A typed test policy that logs one var, {@code total_loss}; a test gives its forward. */
    private abstract static class LossPolicy implements Policy<String>
    {
        protected int loss;
        private final int batchSize;

        LossPolicy(final int batchSize)
        {
            this.batchSize = batchSize;
        }

        @Override
        public void registerLogVars(final LogSink sink)
        {
            loss = sink.register("total_loss");
        }

        @Override
        public List<String> monitorVars()
        {
            return List.of("total_loss");
        }

        @Override
        public int batchSize()
        {
            return batchSize;
        }

        @Override
        public Map<String, Object> stateDict()
        {
            return Map.of();
        }

        @Override
        public void loadStateDict(final Map<String, Object> state)
        {
        }
    }

    /**
     * Two open learners of one process in one place (exp_name, instance_name, rank) would write over each other's
     * checkpoints and append to one log: the second is refused, naming the place, and nothing of the first changes;
     * another instance name is another place, and the place is free again once the first is closed.
     */
    @Test
    void aSecondOpenLearnerInTheSamePlaceShouldBeRefused() throws Exception
    {
        final String exp = dir.resolve("twice").toString();
        final Config cfg = Config.empty().with("hook.save_ckpt_after_run", false);
        try (BaseLearner<String> first = new BaseLearner<>(cfg, null, null, DistInfo.single(), exp, "learner"))
        {
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> new BaseLearner<String>(cfg, null, null, DistInfo.single(), exp, "learner"));
            assertEquals("learner learner (rank 0) in " + dir.resolve("twice").toAbsolutePath().normalize()
                + ": another open learner of this process writes there (the same exp_name, instance_name and rank), "
                + "and each would overwrite the other's checkpoints and logs: close it first, or give this one another "
                + "exp_name or instance_name", refused.getMessage());
            try (BaseLearner<String> other = new BaseLearner<>(cfg, null, null, DistInfo.single(), exp, "other"))
            {
                assertEquals("other", other.instanceName());
            }
        }
        try (BaseLearner<String> again = new BaseLearner<>(cfg, null, null, DistInfo.single(), exp, "learner"))
        {
            assertEquals(0, again.trainIter());
        }
        // A learner whose files cannot be made frees its place: a file where its folder would be.
        final java.nio.file.Path blocked = java.nio.file.Files.writeString(dir.resolve("blocked"), "a user's file");
        assertThrows(java.io.UncheckedIOException.class,
            () -> new BaseLearner<String>(cfg, null, null, DistInfo.single(), blocked.toString(), "learner"));
        assertEquals("a user's file", java.nio.file.Files.readString(blocked));
        java.nio.file.Files.delete(blocked);
        try (BaseLearner<String> freed = new BaseLearner<>(cfg, null, null, DistInfo.single(), blocked.toString(),
            "learner"))
        {
            assertEquals(0, freed.trainIter());
        }
        // And one that fails after its logs are open (a folder where its config.yaml goes).
        final String late = dir.resolve("late").toString();
        final java.nio.file.Path config = java.nio.file.Files.createDirectories(dir.resolve("late/config.yaml"));
        assertTrue(assertThrows(IllegalStateException.class,
            () -> new BaseLearner<String>(cfg, null, null, DistInfo.single(), late, "learner")).getMessage()
            .startsWith("cannot write the effective config to "));
        java.nio.file.Files.delete(config);
        try (BaseLearner<String> freed = new BaseLearner<>(cfg, null, null, DistInfo.single(), late, "learner"))
        {
            assertEquals(0, freed.trainIter());
        }
    }
}
