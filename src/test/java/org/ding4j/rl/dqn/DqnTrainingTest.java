package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.envs.CartPole;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.testing.SteppedCloseFailingCartPole;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The DQN pipeline's config checks, a short real run that must solve, resumes and their random streams. */
@Tag("native")
class DqnTrainingTest
{
    @TempDir
    Path dir;

    /** A job a launcher may restart: it keeps its folder, whose earlier run is the case under test. */
    private static OffPolicyPipeline keepingItsFolder(final Config user)
    {
        return new OffPolicyPipeline(user, org.ding4j.dist.DistInfo.single(),
            new org.ding4j.dist.ElasticAttempt(0, 1, List.of(), null));
    }

    @Test
    void shouldCheckTheLearnerSectionBeforeStarting()
    {
        final org.ding4j.config.ConfigException ex = org.junit.jupiter.api.Assertions.assertThrows(
            org.ding4j.config.ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
                .with("exp_name", dir.resolve("bad").toString()).with("learner.hook.log_show_after_iter", -1L)));
        assertEquals("learner.hook.log_show_after_iter: expected a positive integer, got -1", ex.getMessage());
        assertTrue(!Files.exists(dir.resolve("bad")), "nothing is written for a bad config");
    }

    @Test
    void shouldRefuseCountsBeyondWhatTheRunCanHoldNamingTheKey()
    {
        final Map<String, String> expected = new java.util.LinkedHashMap<>();
        expected.put("env.collector_env_num=2147483647",
            "env.collector_env_num: expected an integer in [1, 4096], got 2147483647");
        expected.put("env.evaluator_env_num=1e9", "env.evaluator_env_num: expected an integer in [1, 4096], got 1.0E9");
        expected.put("policy.nstep=2147483647", "policy.nstep: expected an integer in [1, 10000], got 2147483647");
        expected.put("policy.model.encoder_hidden_size_list=[2000000000]", "policy.model.encoder_hidden_size_list: "
            + "expected a non-empty list of integers in [1, 65536], got a list [2000000000]");
        expected.put("policy.other.replay_buffer.replay_buffer_size=1073741824",
            "policy.other.replay_buffer.replay_buffer_size: expected an integer in [1, ");
        expected.put("learner.dataloader.num_workers=100000",
            "learner.dataloader.num_workers: expected an integer in [0, 256], got 100000");
        expected.put("policy.model.activation=gelu", "policy.model.activation: expected relu or tanh, got");
        expected.put("exp_name=/proc/self", "exp_name: expected a folder path without empty, '.' or '..' segments");
        expected.put("exp_name=run/../../up", "exp_name: expected a folder path without empty, '.' or '..' segments");
        expected.forEach((override, message) -> {
            final org.ding4j.config.ConfigException ex = org.junit.jupiter.api.Assertions.assertThrows(
                org.ding4j.config.ConfigException.class,
                () -> new OffPolicyPipeline(org.ding4j.config.ConfigFiles.override(Config.empty(), List.of(override))));
            assertTrue(ex.getMessage().startsWith(message), override + " -> " + ex.getMessage());
        });
    }

    /** The shipped Acrobot config passes the checks (the env's spaces against the model) and runs. */
    @Test
    void theAcrobotConfigShouldRunOnTheAcrobotEnv() throws Exception
    {
        final Config user = org.ding4j.config.ConfigFiles.load(Path.of("examples/acrobot_dqn.yaml"))
            .with("exp_name", dir.resolve("acrobot").toString()).with("pipeline.max_env_step", 600L)
            .with("pipeline.warmup_updates", 0L);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(user).run(p -> { }, Map.of());
        assertTrue(summary.envSteps() >= 600 && summary.trainIter() > 0, summary.toString());
        final org.ding4j.config.ConfigException wrong = org.junit.jupiter.api.Assertions.assertThrows(
            org.ding4j.config.ConfigException.class,
            () -> new OffPolicyPipeline(user.with("policy.model.obs_shape", 4L)));
        assertEquals("policy.model.obs_shape: expected 6 (acrobot's observation width), got 4", wrong.getMessage());
        final org.ding4j.config.ConfigException box = org.junit.jupiter.api.Assertions.assertThrows(
            org.ding4j.config.ConfigException.class, () -> new OffPolicyPipeline(user.with("env.type", "pendulum")));
        assertTrue(box.getMessage().startsWith("env.type: expected an environment with a Discrete action space"),
            box.getMessage());
    }

    /**
     * A reward that turns NaN stops the run with the reward named (TD3's, SAC's and PPO's refuse it alike), here in
     * the first evaluation, before any update (the replay's own check: {@code ReplayBufferTest}); the summary records
     * the error, and no best return (null: JSON has no infinity).
     */
    @Test
    void aNonFiniteRewardShouldStopTheRunNamingIt() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("nan").toString())
            .with("env.type", NanRewardCartPole.class.getName()).with("pipeline.max_env_step", 2_000L);
        final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> new OffPolicyPipeline(user).run(p -> { }, Map.of()));
        assertTrue(ex.getMessage().startsWith("reward") && ex.getMessage().contains(
            "expected a finite value from the environment, got NaN ("), ex.getMessage());
        final String summary = Files.readString(dir.resolve("nan/summary.json"));
        assertTrue(summary.contains("got NaN (evaluation env ") && summary.contains("\"best_eval_return\" : null"),
            summary);
    }

    /**
     * A run the application ends with {@code BaseLearner.stop()} (from any thread; here a hook on the training thread
     * at update 30) says so in its summary: stopped, not interrupted by a signal, no error. A run that reaches its
     * limit does not, in parallel mode either (whose driver ends the learner with stop() itself).
     */
    @ParameterizedTest
    @ValueSource(strings = {"serial", "parallel"})
    void aRunEndedByTheApplicationsStopShouldSaySo(final String mode) throws Exception
    {
        final Config user = Config.empty().with("env.stop_value", 1000.0).with("pipeline.mode", mode);
        final OffPolicyRun.Summary limited = new OffPolicyPipeline(user.with("exp_name",
            dir.resolve("limit-" + mode).toString()).with("pipeline.max_train_iter", 120L)
            .with("learner.hook.save_ckpt_after_iter", 20L)).run(p -> { });
        assertTrue(!limited.stopped() && !limited.interrupted() && null == limited.error(), limited.toString());
        // The checkpoints in natural order: iteration_20 ... iteration_100, iteration_120 (text order would put
        // iteration_100 before iteration_20).
        final List<?> listed = (List<?>)limited.paths().get("checkpoints");
        final List<String> iterations = listed.stream().map(f -> Path.of(f.toString()).getFileName().toString())
            .filter(name -> name.startsWith("iteration_")).toList();
        assertEquals(List.of("iteration_20.pth.tar", "iteration_40.pth.tar", "iteration_60.pth.tar",
            "iteration_80.pth.tar", "iteration_100.pth.tar", "iteration_120.pth.tar"), iterations);
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(user.with("exp_name",
            dir.resolve("stopped-" + mode).toString()));
        pipeline.onLearner(learner -> learner.registerHook(
            new org.ding4j.hook.LearnerHook("stop_at_30", 50, org.ding4j.hook.HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final org.ding4j.hook.HookContext context)
                {
                    if (30 == context.lastIter())
                    {
                        learner.stop();
                    }
                }
            }));
        final OffPolicyRun.Summary summary = pipeline.run(p -> { });
        assertTrue(summary.stopped() && !summary.interrupted() && null == summary.error(), summary.toString());
        assertEquals(30, summary.trainIter());
        final com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(dir.resolve("stopped-" + mode + "/summary.json").toFile());
        assertTrue(json.get("stopped").asBoolean() && !json.get("interrupted").asBoolean(), json.toString());
    }

    /** CartPole whose reward is NaN at each instance's 5th step: the first evaluation's envs meet it. */
    public static final class NanRewardCartPole extends org.ding4j.env.EnvWrapper
    {
        private int steps;

        /** A CartPole. */
        public NanRewardCartPole()
        {
            super(new CartPole());
        }

        @Override
        public void step(final float[] action, final float[] obs, final org.ding4j.env.StepResult result)
        {
            env.step(action, obs, result);
            if (++steps == 5)
            {
                result.set(Double.NaN, result.terminated(), result.truncated());
            }
        }
    }

    /**
     * An episode that starts on a NaN observation is refused by the evaluation, which would otherwise act on it
     * (the net's ReLU reads a NaN as 0) and blame the reward that followed, or nothing.
     */
    @Test
    void aNonFiniteFirstObservationShouldStopTheEvaluationNamingIt()
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("nan-reset").toString())
            .with("env.type", org.ding4j.testing.NanResetCartPole.class.getName())
            .with("pipeline.max_env_step", 2_000L);
        final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> new OffPolicyPipeline(user).run(p -> { }, Map.of()));
        assertEquals("observation after reset: expected finite values from the environment, got NaN at index 2 "
            + "(evaluation env 0)", ex.getMessage());
    }

    /**
     * An env whose close() throws: the one the pipeline reads its spaces from is named with its key and class; once a
     * run has ended and written its summary, the failure says that summary holds the result.
     */
    @Test
    void anEnvWhoseCloseFailsIsNamedAndTheRunsResultStands() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("close").toString())
            .with("pipeline.max_env_step", 300L);
        final IllegalStateException probe = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> new OffPolicyPipeline(user.with("env.type", CloseFailingCartPole.class.getName())));
        assertEquals("env.type: " + CloseFailingCartPole.class.getName() + "'s close() failed (on the env the pipeline "
            + "read its spaces from): java.lang.IllegalStateException: close failed", probe.getMessage());
        final IllegalStateException after = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> new OffPolicyPipeline(user.with("env.type", SteppedCloseFailingCartPole.class.getName()))
                .run(p -> { }, Map.of()));
        assertEquals("the run ended (" + dir.resolve("close").resolve("summary.json") + " holds its result) but "
            + "closing it failed: java.lang.IllegalStateException: close failed", after.getMessage());
        assertTrue(Files.readString(dir.resolve("close/summary.json")).contains("\"error\" : null"));
    }

    /** A CartPole whose close() throws. */
    public static final class CloseFailingCartPole extends org.ding4j.env.EnvWrapper
    {
        /** A CartPole. */
        public CloseFailingCartPole()
        {
            super(new CartPole());
        }

        @Override
        public void close()
        {
            throw new IllegalStateException("close failed");
        }
    }

    @Test
    void shouldSolveCartPoleWithTheDefaultConfig() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("run").toString())
            // A budget well above the ~1,300 env steps it takes here: the trajectory follows the CPU's GEMM rounding,
            // so another processor solves after other steps; the budget only costs time when the run fails.
            .with("pipeline.max_env_step", 20_000L).with("pipeline.warmup_updates", 20L);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(user).run(p -> { }, java.util.Map.of());
        assertTrue(summary.solved(), "best eval return " + summary.bestEvalReturn() + " after " + summary.envSteps());
        assertTrue(Files.isRegularFile(dir.resolve("run/ckpt/" + OffPolicyPipeline.BEST_CHECKPOINT)));
        assertTrue(Files.readString(dir.resolve("run/summary.json")).contains("\"solved\" : true"));
    }

    /**
     * Config holes that once failed mid-run: loader workers in parallel mode (the batches are preallocated objects,
     * not lists of jobs, so they pass through the workers) and no {@code save_ckpt_after_run} hook (the best
     * checkpoint is saved through the learner's checkpoints, not that hook).
     */
    @Test
    void shouldRunParallelModeWithLoaderWorkersAndWithoutTheAfterRunSaveHook() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("holes").toString())
            .with("pipeline.mode", "parallel").with("pipeline.max_train_iter", 120L)
            .with("pipeline.warmup_updates", 0L).with("learner.dataloader.num_workers", 2L)
            .with("learner.hook.save_ckpt_after_run", false);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(user).run(p -> { }, Map.of());
        assertEquals(120, summary.trainIter());
        assertTrue(Files.isRegularFile(dir.resolve("holes/ckpt/" + OffPolicyPipeline.BEST_CHECKPOINT)));
        assertTrue(!Files.exists(dir.resolve("holes/ckpt/iteration_120.pth.tar")), "no after_run save hook");
    }

    /**
     * Stops after 100 updates, resumes from the after_run checkpoint through
     * {@code learner.hook.load_ckpt_before_run}, and checks that the resumed run starts from the saved counters
     * (updates, env steps and so epsilon) and carries them on to its own limit.
     */
    @ParameterizedTest
    @ValueSource(strings = {"serial", "parallel"})
    void shouldResumeFromACheckpointWithTheSameCounters(final String mode) throws Exception
    {
        final Config first = Config.empty().with("exp_name", dir.resolve("first").toString())
            .with("pipeline.mode", mode).with("pipeline.max_train_iter", 100L).with("pipeline.warmup_updates", 0L);
        final OffPolicyRun.Summary stopped = new OffPolicyPipeline(first).run(p -> { }, Map.of());
        assertEquals(100, stopped.trainIter());
        final Path ckpt = dir.resolve("first/ckpt/iteration_100.pth.tar");
        final long[] saved = counters(ckpt);
        assertEquals(100, saved[0]);
        assertTrue(saved[1] > 0 && saved[1] <= stopped.envSteps(), "saved env steps " + saved[1]);
        if ("serial".equals(mode))
        {
            assertEquals(stopped.envSteps(), saved[1], "serial saves after its last collect");
        }

        final List<OffPolicyRun.Progress> reports = Collections.synchronizedList(new ArrayList<>());
        final Config resume = Config.empty().with("exp_name", dir.resolve("resumed").toString())
            .with("pipeline.mode", mode).with("pipeline.max_train_iter", 150L).with("pipeline.warmup_updates", 0L)
            .with("learner.hook.load_ckpt_before_run", ckpt.toString());
        final OffPolicyRun.Summary resumed = new OffPolicyPipeline(resume).run(reports::add, Map.of());

        final OffPolicyRun.Progress firstReport = reports.get(0);
        // The schedule continues: evaluated at 80 before, next at 120 (parallel mode's collector thread evaluates
        // at the update it reads, so at 120 or a little later).
        assertTrue("serial".equals(mode) ? 120 == firstReport.trainIter()
            : firstReport.trainIter() >= 120 && firstReport.trainIter() < 150, "first evaluation at "
            + firstReport.trainIter());
        assertTrue(firstReport.envSteps() > saved[1], "env steps continue from the checkpoint");
        assertEquals(0.1 + (0.95 - 0.1) * Math.exp(-firstReport.envSteps() / 10000.0), firstReport.epsilon(), 1e-9,
            "epsilon follows the restored env steps");
        assertEquals(150, resumed.trainIter());
        final double savedBest = bestReturn(ckpt);
        assertEquals(stopped.bestEvalReturn(), savedBest, "the checkpoint holds the run's best return");
        assertTrue(resumed.bestEvalReturn() >= savedBest, "the best return is restored, not restarted");
        assertEquals(resumed.bestEvalReturn() > savedBest,
            Files.exists(dir.resolve("resumed/ckpt/" + OffPolicyPipeline.BEST_CHECKPOINT)),
            "ckpt_best is written after a resume only on a real improvement");
        // The buffer is not saved (as in DI-engine): 7 collects of 8 refill it short of a batch of 64, then 10
        // collects carry 5 updates each.
        final long refillAndTrain = 7 * 8 + 50 / 5 * 8;
        if ("serial".equals(mode))
        {
            assertEquals(saved[1] + refillAndTrain, resumed.envSteps());
        }
        else
        {
            assertTrue(resumed.envSteps() >= saved[1] + refillAndTrain, "env steps " + resumed.envSteps());
        }
        final long[] end = counters(dir.resolve("resumed/ckpt/iteration_150.pth.tar"));
        assertEquals(150, end[0]);
        assertTrue(end[1] > saved[1]);
    }

    /**
     * A resume the checkpoint refuses (its random streams are for 8 collector envs, this run has 4) fails before
     * training and writes nothing: the file it tried to load keeps its bytes, no exception checkpoint of an
     * untrained net or after-run save lands in the folder, and the config and summary stay the earlier run's.
     */
    @Test
    void aRefusedResumeShouldLeaveTheFolderAsItWas() throws Exception
    {
        final Path exp = dir.resolve("refused");
        new OffPolicyPipeline(Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 30L)
            .with("pipeline.warmup_updates", 0L)).run(p -> { }, Map.of());
        final Path ckpt = exp.resolve("ckpt/iteration_30.pth.tar");
        final byte[] before = Files.readAllBytes(ckpt);
        final byte[] config = Files.readAllBytes(exp.resolve("total_config.yaml"));
        final byte[] summary = Files.readAllBytes(exp.resolve("summary.json"));
        final List<Path> files;
        try (var listing = Files.list(exp.resolve("ckpt")))
        {
            files = listing.sorted().toList();
        }
        final Config resume = Config.empty().with("exp_name", exp.toString()).with("env.collector_env_num", 4L)
            .with("pipeline.warmup_updates", 0L).with("learner.hook.load_ckpt_before_run", ckpt.toString());
        // In a folder it keeps (a restartable job's): a run of its own would write a renewed folder beside it.
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
            () -> keepingItsFolder(resume).run(p -> { }, Map.of()));
        org.junit.jupiter.api.Assertions.assertArrayEquals(before, Files.readAllBytes(ckpt),
            "the resume file is untouched");
        org.junit.jupiter.api.Assertions.assertArrayEquals(config, Files.readAllBytes(exp.resolve("total_config.yaml")),
            "the config of the run that wrote the folder is not replaced by the failed start's");
        org.junit.jupiter.api.Assertions.assertArrayEquals(summary, Files.readAllBytes(exp.resolve("summary.json")),
            "the summary of the run that wrote the folder is not replaced by the failed start's");
        try (var listing = Files.list(exp.resolve("ckpt")))
        {
            assertEquals(files, listing.sorted().toList(), "no checkpoint written by the failed start");
        }
    }

    /**
     * One job per folder: while a run holds its folder, a second job there is refused before it writes anything,
     * naming the holder's pid and the key; once the first has ended, the folder is free again.
     */
    @Test
    void aSecondJobInTheSameFolderShouldBeRefusedWhileTheFirstRuns() throws Exception
    {
        final Path exp = dir.resolve("shared");
        final Config user = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 60L)
            .with("pipeline.warmup_updates", 0L);
        final java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch refused = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CompletableFuture<OffPolicyRun.Summary> first =
            java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try
                {
                    return new OffPolicyPipeline(user).run(p -> {
                        running.countDown();
                        awaitQuietly(refused);
                    });
                }
                catch (final java.io.IOException ex)
                {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
        assertTrue(running.await(120, java.util.concurrent.TimeUnit.SECONDS), "the first run evaluates");
        final byte[] config = Files.readAllBytes(exp.resolve("total_config.yaml"));
        // A job that keeps its folder (a run of its own would write a renewed one beside the running one's).
        final org.ding4j.config.ConfigException ex = org.junit.jupiter.api.Assertions.assertThrows(
            org.ding4j.config.ConfigException.class, () -> keepingItsFolder(user.with("seed", 7L)).run(p -> { }));
        // The refusal in this process must not have dropped the OS lock: another process is refused too.
        final List<String> probe = org.ding4j.testing.ChildJvm.javaCommand(dir,
            org.ding4j.checkpoint.FolderLockProbe.class.getName());
        probe.add(exp.toString());
        final Process other = new ProcessBuilder(probe).redirectErrorStream(true).start();
        final String said = new String(other.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(other.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), said);
        refused.countDown();
        assertTrue(said.contains("refused: ") && said.contains("(pid " + ProcessHandle.current().pid() + ")"), said);
        assertTrue(ex.getMessage().startsWith("exp_name: ") && ex.getMessage().contains("is in use by another job "
            + "(pid " + ProcessHandle.current().pid() + ")"), ex.getMessage());
        org.junit.jupiter.api.Assertions.assertArrayEquals(config,
            Files.readAllBytes(exp.resolve("total_config.yaml")));
        assertEquals(60, first.get(120, java.util.concurrent.TimeUnit.SECONDS).trainIter());
        assertEquals(60, keepingItsFolder(user).run(p -> { }).trainIter(), "free again after the first ended");
    }

    private static void awaitQuietly(final java.util.concurrent.CountDownLatch latch)
    {
        try
        {
            latch.await(120, java.util.concurrent.TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A resume in a folder whose ckpt_best holds a better evaluation than the checkpoint it resumes from (the best
     * came after that save) keeps it: only a better evaluation replaces the file.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aResumeShouldNotReplaceABetterCkptBestOfItsFolder() throws Exception
    {
        final Path exp = dir.resolve("keep-best");
        final Config first = Config.empty().with("exp_name", exp.toString()).with("pipeline.max_train_iter", 40L)
            .with("pipeline.warmup_updates", 0L).with("learner.hook.save_ckpt_after_iter", 20L)
            .with("env.stop_value", 1000.0);
        new OffPolicyPipeline(first).run(p -> { });
        // The folder's best as if a later evaluation had reached 500.
        final Path best = exp.resolve("ckpt/" + OffPolicyPipeline.BEST_CHECKPOINT);
        final Map<String, Object> state = new TorchCheckpointIO().read(best);
        ((Map<String, Object>)state.get(OffPolicyRun.PIPELINE_STATE)).put("best_eval_return", 500.0);
        new TorchCheckpointIO().write(best, state);
        final byte[] kept = Files.readAllBytes(best);
        // The checkpoint resumed from knew only a poor best: every evaluation of the resumed run beats it.
        final Path from = exp.resolve("ckpt/iteration_20.pth.tar");
        final Map<String, Object> resumed = new TorchCheckpointIO().read(from);
        ((Map<String, Object>)resumed.get(OffPolicyRun.PIPELINE_STATE)).put("best_eval_return", -1000.0);
        new TorchCheckpointIO().write(from, resumed);
        keepingItsFolder(first.with("pipeline.max_train_iter", 80L).with("learner.hook.load_ckpt_before_run",
            from.toString())).run(p -> { });
        org.junit.jupiter.api.Assertions.assertArrayEquals(kept, Files.readAllBytes(best),
            "no evaluation of the resumed run beat 500, so ckpt_best is the folder's");
    }

    @Test
    void aResumeShouldContinueTheRandomStreamsOfItsCheckpoint() throws Exception
    {
        final Config first = Config.empty().with("exp_name", dir.resolve("streams").toString())
            .with("pipeline.max_train_iter", 30L).with("pipeline.warmup_updates", 0L);
        new OffPolicyPipeline(first).run(p -> { }, Map.of());
        final Path ckpt = dir.resolve("streams/ckpt/iteration_30.pth.tar");
        final Map<?, ?> saved;
        try (PointerScope scope = new PointerScope())
        {
            saved = (Map<?, ?>)new TorchCheckpointIO().read(ckpt).get(OffPolicyRun.RANDOM_STATE);
        }
        final Config second = Config.empty().with("exp_name", dir.resolve("streams2").toString());
        final Config cfg = new OffPolicyPipeline(second).config();
        final DqnAlgorithm.Parts parts = (DqnAlgorithm.Parts)new DqnAlgorithm().parts(cfg, 0, 0);
        try (OffPolicyRun<DqnBatch> run = new OffPolicyRun<>(cfg, "dqn", 0, 0, org.ding4j.dist.DistInfo.single(),
            parts, p -> { }))
        {
            assertTrue(!saved.get("explore").equals(parts.collector().randomState().get("explore")),
                "a fresh run starts its streams at the seed");
            run.learner().checkpoints().load(ckpt);
            assertEquals(saved.get("explore"), parts.collector().randomState().get("explore"));
            // Each env continues its saved stream with a new episode: the start's CartPole.OBS draws come first.
            final List<Long> continued = new ArrayList<>();
            for (final Object state : (List<?>)saved.get("envs"))
            {
                final org.ding4j.env.ResumableRandom stream = new org.ding4j.env.ResumableRandom(
                    (Long)state);
                for (int k = 0; k < CartPole.OBS; k++)
                {
                    stream.nextDouble();
                }
                continued.add(stream.state());
            }
            assertEquals(continued, parts.collector().randomState().get("envs"));
            assertEquals(saved.get("replay"), parts.buffer().randomState());
        }
    }

    private static double bestReturn(final Path ckpt) throws Exception
    {
        try (PointerScope scope = new PointerScope())
        {
            final Map<?, ?> pipeline = (Map<?, ?>)new TorchCheckpointIO().read(ckpt).get(OffPolicyRun.PIPELINE_STATE);
            return (Double)pipeline.get("best_eval_return");
        }
    }

    private static long[] counters(final Path ckpt) throws Exception
    {
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new TorchCheckpointIO().read(ckpt);
            return new long[] {((Number)state.get("last_iter")).longValue(),
                ((Number)state.get("last_step")).longValue()};
        }
    }
}
