package org.ding4j.rl.ac;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TD3 and SAC on Pendulum through the learner, from the embedded DI-engine defaults: each reaches the stop value
 * (-250 over 5 evaluation episodes), writes its best checkpoint with every section and its summary; bad values are
 * refused with the key before anything is written.
 */
class ActorCriticTrainingTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void threads()
    {
        Threads.configure(1, 1, 1);
    }

    /**
     * Parallel mode: the collector thread acts with a copy of the actor refreshed from the learner's, the learner
     * trains through its data loader at the serial ratio of updates to env steps, and the run ends at its limit with
     * the same files as a serial one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void trainsInParallelMode(final String algorithm) throws Exception
    {
        final Path exp = dir.resolve("parallel-" + algorithm);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(Config.empty().with("policy.type", algorithm)
            .with("exp_name", exp.toString()).with("pipeline.mode", "parallel").with("pipeline.max_train_iter", 300L)
            .with("policy.random_collect_size", 200L)).run(p -> { });
        assertEquals("parallel", summary.mode());
        assertTrue(summary.trainIter() >= 300 && summary.trainIter() < 300 + 6, summary.toString());
        // Updates are granted per collect at the serial ratio: never more than the collected steps allow.
        final long perCollect = new OffPolicyPipeline(Config.empty().with("policy.type", algorithm)).config()
            .getLong("policy.learn.update_per_collect");
        final long nSample = new OffPolicyPipeline(Config.empty().with("policy.type", algorithm)).config()
            .getLong("policy.collect.n_sample");
        assertTrue(summary.trainIter() <= (summary.envSteps() / nSample + 1) * perCollect, summary.toString());
        final Map<?, ?> json = new ObjectMapper().readValue(exp.resolve("summary.json").toFile(), Map.class);
        assertEquals("parallel", json.get("mode"));
        assertTrue(Files.isRegularFile(Path.of((String)json.get("best_checkpoint"))), json.toString());
        assertTrue(!((java.util.List<?>)json.get("evaluations")).isEmpty(), json.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void solvesFromTheEmbeddedDefaults(final String algorithm) throws Exception
    {
        final Path exp = dir.resolve(algorithm);
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(Config.empty().with("policy.type", algorithm)
            .with("exp_name", exp.toString()));
        final OffPolicyRun.Summary summary = pipeline.run(p -> { });
        assertTrue(summary.solved(), algorithm + " reached " + summary.bestEvalReturn() + " after "
            + summary.envSteps() + " env steps");
        assertTrue(summary.bestEvalReturn() >= -250);
        final Map<?, ?> json = new ObjectMapper().readValue(exp.resolve("summary.json").toFile(), Map.class);
        assertEquals(true, json.get("solved"));
        assertEquals(algorithm, json.get("algorithm"));
        final Map<String, Object> best = new TorchCheckpointIO().read(Path.of((String)json.get("best_checkpoint")));
        final Map<?, ?> model = (Map<?, ?>)best.get("model");
        assertTrue(model.containsKey("actor.0.weight") && model.containsKey("critic.q2.0.weight"), model.keySet()
            .toString());
        for (final String key : "td3".equals(algorithm) ? new String[] {"optimizer_actor", "optimizer_critic"}
            : new String[] {"optimizer_q", "optimizer_policy", "optimizer_alpha", "log_alpha"})
        {
            assertTrue(best.containsKey(key), key + " in " + best.keySet());
        }
        assertTrue(best.containsKey("pipeline") && best.containsKey("random"), best.keySet().toString());
        // `ding4j eval`'s path: the best net on 20 fresh starts, far above an untrained one's ~-1200.
        final double[] eval = pipeline.evaluate(best, 20, 12345);
        assertTrue(eval[0] > -500 && eval[1] <= eval[0] && eval[0] <= eval[2], java.util.Arrays.toString(eval));
        // The actor alone (a file saved from Python, DI-engine's without this run's streams) evaluates the same.
        final Map<String, Object> actorOnly = new java.util.LinkedHashMap<>();
        model.forEach((k, v) -> {
            if (String.valueOf(k).startsWith("actor."))
            {
                actorOnly.put(String.valueOf(k), v);
            }
        });
        org.junit.jupiter.api.Assertions.assertArrayEquals(eval, pipeline.evaluate(Map.of("model", actorOnly), 20,
            12345));
        assertEquals("episodes: expected >= 1, got 0", assertThrows(IllegalArgumentException.class,
            () -> pipeline.evaluate(best, 0, 1)).getMessage());
        assertEquals("state", assertThrows(NullPointerException.class, () -> pipeline.evaluate(null, 1, 1))
            .getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "td3 | policy.model.obs_shape | 4",
        "sac | policy.model.action_shape | 2",
        "td3 | policy.learn.target_theta | -0.1",
        "sac | policy.learn.target_theta | 1.5",
        "td3 | policy.learn.noise_range.max | -0.2",
        "td3 | policy.learn.noise_range.min | 0.3",
        "sac | policy.learn.alpha | 0",
        "td3 | policy.model.twin_critic | false",
        "sac | env.evaluator_env_num | 0",
        "td3 | env.evaluator_env_num | -1"})
    void refusesABadValueNamingItsKey(final String algorithm, final String key, final String value)
    {
        final Path exp = dir.resolve("bad");
        final Object parsed = "false".equals(value) ? Boolean.FALSE : value.contains(".")
            ? (Object)Double.parseDouble(value) : (Object)Long.parseLong(value);
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
            .with("policy.type", algorithm).with("exp_name", exp.toString()).with(key, parsed)));
        assertTrue(ex.getMessage().contains(key) && ex.getMessage().contains(value), ex.getMessage());
        assertFalse(Files.exists(exp), "nothing written");
    }

    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void refusesAnAsymmetricNoiseClipOrAnUnknownType(final String algorithm)
    {
        if ("td3".equals(algorithm))
        {
            final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(
                Config.empty().with("policy.type", "td3").with("policy.learn.noise_range.min", -0.2)));
            assertTrue(ex.getMessage().contains("policy.learn.noise_range.min"), ex.getMessage());
            return;
        }
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> new OffPolicyPipeline(Config.empty().with("policy.type", "a2c")));
        assertTrue(ex.getMessage().contains("policy.type") && ex.getMessage().contains("a2c"), ex.getMessage());
    }

    /**
     * A restarted attempt (torchrun's restart count 1) in a TD3 or SAC job's folder resumes from the newest verified
     * checkpoint, not from update 0, and its summary records the attempt. It does not repeat the random warm-up (200
     * env steps here): its policy refills the replay, and updates resume once it holds a batch (64).
     */
    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void aRestartedAttemptResumesFromTheNewestCheckpoint(final String algorithm) throws Exception
    {
        final Path exp = dir.resolve("restart-" + algorithm);
        final Config user = Config.empty().with("policy.type", algorithm).with("exp_name", exp.toString())
            .with("policy.random_collect_size", 200L).with("learner.hook.save_ckpt_after_iter", 40L);
        final OffPolicyRun.Summary first = new OffPolicyPipeline(user.with("pipeline.max_train_iter", 90L))
            .run(p -> { });
        final OffPolicyRun.Summary resumed = new OffPolicyPipeline(user.with("pipeline.max_train_iter", 130L),
            org.ding4j.dist.DistInfo.single(), org.ding4j.dist.ElasticAttempt.fromEnvironment(Map.of(
            "TORCHELASTIC_RESTART_COUNT", "1",
            "TORCHELASTIC_MAX_RESTARTS", "1"))).run(p -> { });
        final Map<?, ?> json = new ObjectMapper().readValue(exp.resolve("summary.json").toFile(), Map.class);
        final Map<?, ?> elastic = (Map<?, ?>)json.get("elastic");
        assertEquals(90, ((Number)elastic.get("resumed_iter")).intValue(), json.toString());
        assertTrue(((String)elastic.get("resumed_from")).endsWith("iteration_90.pth.tar"), json.toString());
        assertTrue(resumed.trainIter() >= 130 && resumed.trainIter() < 140, "continued from 90: " + resumed);
        final long stepsAfterResume = resumed.envSteps() - first.envSteps();
        assertTrue(stepsAfterResume < 200, "40 updates after a batch's 64 steps, no second warm-up: "
            + stepsAfterResume + " env steps (" + first + " then " + resumed + ")");
    }

    /** An env that fails at its 250th step, to fail a run in the middle (found by name through env.type). */
    public static final class FailingPendulum extends org.ding4j.env.EnvWrapper
    {
        private int steps;

        /** A Pendulum with its time limit. */
        public FailingPendulum()
        {
            super(new org.ding4j.rl.envs.Pendulum());
        }

        @Override
        public void step(final float[] action, final float[] obs, final org.ding4j.env.StepResult result)
        {
            if (++steps == 250)
            {
                throw new IllegalStateException("the env broke at step 250");
            }
            env.step(action, obs, result);
        }
    }

    /**
     * An observation that turns NaN stops a TD3 or SAC run naming it, here in the first evaluation (before any
     * collection), as DQN's evaluator and every collector refuse it: a NaN observation would otherwise act as some
     * action and count as a return.
     */
    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void aNonFiniteObservationShouldStopTheRunNamingIt(final String algorithm)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> new OffPolicyPipeline(
            Config.empty().with("policy.type", algorithm).with("exp_name", dir.resolve("nan-" + algorithm).toString())
                .with("env.type", NanObservationPendulum.class.getName())).run(p -> { }));
        assertEquals("observation: expected finite values from the environment, got NaN at index 1 (evaluation env 0)",
            ex.getMessage());
    }

    /** A Pendulum whose observation's second entry is NaN at each instance's 3rd step. */
    public static final class NanObservationPendulum extends org.ding4j.env.EnvWrapper
    {
        private int steps;

        /** A Pendulum with its time limit. */
        public NanObservationPendulum()
        {
            super(new org.ding4j.rl.envs.Pendulum());
        }

        @Override
        public void step(final float[] action, final float[] obs, final org.ding4j.env.StepResult result)
        {
            env.step(action, obs, result);
            if (++steps == 3)
            {
                obs[1] = Float.NaN;
            }
        }
    }

    /**
     * A resume validates the checkpoint's state like the config: an evaluation after its own update count (which
     * kept every evaluation from coming due), a negative update counter, a diverged (infinite) weight, random streams
     * of the wrong kind or count are refused, naming the entry (not dumping the state), and the folder keeps what it
     * had.
     */
    @SuppressWarnings("unchecked")
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "last_eval_iter | pipeline state: last_eval_iter must be <= last_iter (40), got 1000000000000",
        "updates | Td3Policy state dict: 'updates' must be >= 0, got -1",
        "bad random | random state: 'explore': expected an integer, got a String",
        "short eval | random state: 'eval': expected a list of 10 integers, got a list of 1 integer",
        "long envs | random state: 'envs': expected a list of 1 integer, got a list of 3 integers",
        "weight | state dict: 0.weight has non-finite values (NaN or infinity)",
        "no random | has no 'random' state (a pipeline run's checkpoints carry both its evaluation schedule and its "
            + "random streams)",
    })
    void aCorruptCheckpointIsRefusedOnResume(final String corrupt, final String message) throws Exception
    {
        final Path exp = dir.resolve("corrupt-" + corrupt);
        final Config user = Config.empty().with("policy.type", "td3").with("exp_name", exp.toString())
            .with("policy.random_collect_size", 200L).with("learner.hook.save_ckpt_after_iter", 40L)
            .with("pipeline.max_train_iter", 40L);
        new OffPolicyPipeline(user).run(p -> { });
        final Map<String, Object> state = new TorchCheckpointIO().read(exp.resolve("ckpt/iteration_40.pth.tar"));
        switch (corrupt)
        {
            case "last_eval_iter" -> ((Map<String, Object>)state.get("pipeline")).put("last_eval_iter",
                1_000_000_000_000L);
            case "updates" -> state.put("updates", -1L);
            case "no random" -> state.remove("random");
            case "bad random" -> ((Map<String, Object>)state.get("random")).put("explore", "x");
            case "short eval" -> ((Map<String, Object>)state.get("random")).put("eval", java.util.List.of(7L));
            case "long envs" ->
            {
                // Saved since the resume continues the collector's env starts (it replayed the run's first ones).
                assertEquals(1, ((java.util.List<?>)((Map<?, ?>)state.get("random")).get("envs")).size());
                ((Map<String, Object>)state.get("random")).put("envs", java.util.List.of(1L, 2L, 3L));
            }
            default -> ((org.bytedeco.pytorch.Tensor)((Map<?, ?>)state.get("model")).get("actor.0.weight"))
                .fill_(new org.bytedeco.pytorch.Scalar(Double.POSITIVE_INFINITY));
        }
        final Path bad = dir.resolve(corrupt.replace(' ', '_') + ".pth.tar");
        new TorchCheckpointIO().write(bad, state);
        final byte[] summary = Files.readAllBytes(exp.resolve("summary.json"));
        // In a folder it keeps (a restartable job's): a run of its own would write a renewed folder beside it.
        final Exception ex = assertThrows(Exception.class, () -> new OffPolicyPipeline(user
            .with("learner.hook.load_ckpt_before_run", bad.toString()).with("pipeline.max_train_iter", 80L),
            org.ding4j.dist.DistInfo.single(), new org.ding4j.dist.ElasticAttempt(0, 1, java.util.List.of(), null))
            .run(p -> { }));
        String text = ex.toString();
        for (Throwable cause = ex.getCause(); null != cause; cause = cause.getCause())
        {
            text += " / " + cause;
        }
        assertTrue(text.contains(message), text);
        org.junit.jupiter.api.Assertions.assertArrayEquals(summary, Files.readAllBytes(exp.resolve("summary.json")));
        assertFalse(Files.exists(exp.resolve("ckpt/iteration_80.pth.tar")), "nothing trained on it");
    }

    /**
     * A run whose env fails writes its summary with the error and the exception checkpoint, in parallel mode too
     * (whose collector thread is where the env fails: the learner fails on its next batch, as a serial run does).
     */
    @ParameterizedTest
    @ValueSource(strings = {"serial", "parallel"})
    void aFailedRunShouldStillWriteItsSummaryWithTheError(final String mode) throws Exception
    {
        final Path exp = dir.resolve("failing-" + mode);
        final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> new OffPolicyPipeline(
            Config.empty().with("policy.type", "sac").with("exp_name", exp.toString()).with("pipeline.mode", mode)
            .with("env.type", FailingPendulum.class.getName())).run(p -> { }));
        assertTrue(ex.getMessage().contains("the env broke at step 250"), ex.getMessage());
        assertTrue(Files.isRegularFile(exp.resolve("ckpt/" + org.ding4j.learner.BaseLearner.EXCEPTION_CHECKPOINT)));
        final Map<?, ?> json = new ObjectMapper().readValue(exp.resolve("summary.json").toFile(), Map.class);
        assertEquals(false, json.get("solved"));
        assertTrue(String.valueOf(json.get("error")).contains("the env broke at step 250"), json.toString());
    }

    @Test
    void aStopValueShouldBeAnyFiniteNumber()
    {
        assertEquals(-249.5, new OffPolicyPipeline(Config.empty().with("policy.type", "sac")
            .with("env.stop_value", -249.5)).config().getDouble("env.stop_value"), 0.0);
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(Config.empty()
            .with("policy.type", "td3").with("env.stop_value", Double.NEGATIVE_INFINITY)));
        assertEquals("env.stop_value: expected a finite number, got -Infinity", ex.getMessage());
    }
}
