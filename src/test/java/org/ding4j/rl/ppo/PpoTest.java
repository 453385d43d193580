package org.ding4j.rl.ppo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.env.Box;
import org.ding4j.env.Discrete;
import org.ding4j.env.Env;
import org.ding4j.env.Space;
import org.ding4j.env.StepResult;
import org.ding4j.env.VectorEnv;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.ServingActor;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.torch.FusedPpo;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PPO through the pipeline and the learner: GAE against a table worked by hand (terminals, truncations, the rollout's
 * end); each minibatch one iteration with its own hooks, as DI-engine's list path counts them; CartPole solved from the
 * embedded defaults and its best checkpoint evaluated as {@code ding4j eval} does; the Gaussian head on Pendulum; bad
 * rollout shapes and modes refused by key before anything is written.
 */
class PpoTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void threads()
    {
        Threads.configure(1, 1, 1);
    }

    /**
     * Two envs, three steps, gamma 0.5, lambda 0.5. Env 0: step 1 terminal. Env 1: step 0 truncated (its final
     * observation worth 4), the rollout's end worth 8. By hand, k = t * 2 + env:
     * env 0, t=2: delta = 1 + 0.5 * 8 - 2 = 3 (last value 8), A = 3;
     * env 0, t=1: terminal: delta = 1 - 1 = 0, A = 0;
     * env 0, t=0: delta = 1 + 0.5 * 1 - 1 = 0.5, A = 0.5 + 0.25 * 0 = 0.5;
     * env 1, t=2: delta = 2 + 0.5 * 8 - 3 = 3, A = 3;
     * env 1, t=1: delta = 2 + 0.5 * 3 - 2 = 1.5, A = 1.5 + 0.25 * 3 = 2.25;
     * env 1, t=0: truncated: delta = 2 + 0.5 * 4 - 1 = 3, A = 3 (cut).
     */
    @Test
    void gaeShouldMatchTheTableWorkedByHand()
    {
        final float[] rewards = {1, 2, 1, 2, 1, 2};
        final float[] values = {1, 1, 1, 2, 2, 3};
        final byte e = FusedPpo.ENDED;
        final byte[] flags = {0, e, (byte)(e | FusedPpo.TERMINAL), 0, 0, 0};
        final float[] trunc = {0, 4, 0, 0, 0, 0};
        final float[] last = {8, 8};
        final float[] adv = new float[6];
        final float[] ret = new float[6];
        FusedPpo.gae(3, 2, rewards, values, flags, trunc, last, 0.5, 0.5, adv, ret);
        assertArrayEquals(new float[] {0.5f, 3f, 0f, 2.25f, 3f, 3f}, adv, 0f);
        assertArrayEquals(new float[] {1.5f, 4f, 1f, 4.25f, 5f, 6f}, ret, 0f);
    }

    /**
     * An episode that starts on a NaN observation is refused before the rollout acts on it or stores it: it trained on
     * it, and the run died later blaming its learning rate (total_loss NaN).
     */
    @Test
    void aNonFiniteFirstObservationShouldBeRefusedNamingIt()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> new OffPolicyPipeline(
            Config.empty().with("policy.type", "ppo").with("exp_name", dir.resolve("nan-reset").toString())
                .with("env.type", org.ding4j.testing.NanResetCartPole.class.getName()))
            .run(p -> { }));
        assertEquals("observation after reset: expected finite values from the environment, got NaN at index 2 (env 0)",
            ex.getMessage());
    }

    /**
     * One rollout of 512 in minibatches of 128 over 4 epochs is 16 iterations: train_iter advances by 16 per round,
     * and before_iter / after_iter run once per minibatch.
     */
    @Test
    void everyMinibatchShouldBeAnIterationWithItsOwnHooks() throws Exception
    {
        final AtomicLong before = new AtomicLong();
        final AtomicLong after = new AtomicLong();
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(Config.empty().with("policy.type", "ppo")
            .with("exp_name", dir.resolve("counts").toString()).with("env.stop_value", 1000.0)
            .with("pipeline.max_env_step", 1536L));
        pipeline.onLearner(learner ->
        {
            learner.registerHook(counter("count_before", HookPosition.BEFORE_ITER, before));
            learner.registerHook(counter("count_after", HookPosition.AFTER_ITER, after));
        });
        final OffPolicyRun.Summary summary = pipeline.run(p -> { });
        assertEquals(1536, summary.envSteps(), summary.toString());
        assertEquals(3 * 16, summary.trainIter(), summary.toString());
        assertEquals(3 * 16, before.get());
        assertEquals(3 * 16, after.get());
    }

    private static LearnerHook counter(final String name, final HookPosition position, final AtomicLong count)
    {
        return new LearnerHook(name, 99, position)
        {
            @Override
            public void call(final HookContext context)
            {
                count.incrementAndGet();
            }
        };
    }

    /**
     * A run resumed from its iteration checkpoint continues the count: the env steps and iterations of the checkpoint
     * and then whole rollouts, every env on a new episode from its restored stream. The fused call makes a rollout's
     * 16 minibatches at once, so a save due at iteration 8 or 24 waits for the call's last: each file holds exactly the
     * updates its name says (the resume counted 8 updates twice when iteration_40 held 48).
     */
    @Test
    void aResumedRunShouldContinueFromItsCheckpoint() throws Exception
    {
        final Config cfg = Config.empty().with("policy.type", "ppo").with("exp_name", dir.resolve("resume").toString())
            .with("env.stop_value", 1000.0).with("learner.hook.save_ckpt_after_iter", 8L);
        final OffPolicyRun.Summary first = new OffPolicyPipeline(cfg.with("pipeline.max_env_step", 1024L))
            .run(p -> { });
        assertEquals(32, first.trainIter(), first.toString());
        for (final long iter : new long[] {16, 32})
        {
            final Map<String, Object> state = new TorchCheckpointIO().read(dir.resolve("resume/ckpt/iteration_" + iter
                + ".pth.tar"));
            assertEquals(iter, state.get("last_iter"));
            final Map<?, ?> steps = (Map<?, ?>)((Map<?, ?>)((Map<?, ?>)state.get("optimizer")).get("state")).get(0L);
            assertEquals(iter, steps.get("step"), "Adam's step in iteration_" + iter);
        }
        assertFalse(dir.resolve("resume/ckpt/iteration_8.pth.tar").toFile().exists(), "saved inside a call");
        assertFalse(dir.resolve("resume/ckpt/iteration_24.pth.tar").toFile().exists(), "saved inside a call");
        final Path ckpt = dir.resolve("resume/ckpt/iteration_16.pth.tar");
        final OffPolicyRun.Summary resumed = new OffPolicyPipeline(cfg.with("pipeline.max_env_step", 2048L)
            .with("learner.hook.load_ckpt_before_run", ckpt.toString())).run(p -> { });
        assertEquals(2048, resumed.envSteps(), resumed.toString());
        assertEquals(64, resumed.trainIter(), resumed.toString());
    }

    @Test
    void cartPoleShouldSolveAndItsCheckpointEvaluate() throws Exception
    {
        final Path exp = dir.resolve("cartpole");
        final Config cfg = Config.empty().with("policy.type", "ppo").with("exp_name", exp.toString())
            .with("seed", 1L);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(cfg).run(p -> { });
        assertTrue(summary.solved(), summary.toString());
        assertTrue(summary.bestEvalReturn() >= 195, summary.toString());
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new TorchCheckpointIO().read(exp.resolve("ckpt/ckpt_best.pth.tar"));
            final double[] eval = OffPolicyPipeline.forEvaluation(cfg).evaluate(state, 20, 99);
            assertTrue(eval[0] > 100, "mean return of the best checkpoint on 20 fresh starts: " + eval[0]);
            // The nets alone (a file saved from Python, say) evaluate the same: acting needs no optimizer state.
            assertArrayEquals(eval, OffPolicyPipeline.forEvaluation(cfg).evaluate(Map.of("model", state.get("model")),
                20, 99));
        }
    }

    /** The Gaussian head: Pendulum's Box action, a short run through every path (collect, update, evaluate). */
    @Test
    void aBoxActionSpaceShouldTrainTheGaussianHead() throws Exception
    {
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(Config.empty().with("policy.type", "ppo")
            .with("exp_name", dir.resolve("pendulum").toString()).with("env.type", "pendulum")
            .with("policy.model.obs_shape", 3L).with("policy.model.action_shape", 1L)
            .with("env.stop_value", -250.0).with("pipeline.max_env_step", 1024L)).run(p -> { });
        assertEquals(1024, summary.envSteps());
        assertEquals(2 * 16, summary.trainIter());
        assertTrue(Double.isFinite(summary.bestEvalReturn()) && summary.bestEvalReturn() < 0, summary.toString());
    }

    @Test
    void badRolloutShapesAndModesShouldBeRefusedByKey()
    {
        final Config ppo = Config.empty().with("policy.type", "ppo").with("exp_name", dir.resolve("bad").toString());
        assertRefused("policy.learn.batch_size", "expected a divisor of policy.collect.n_sample 512",
            ppo.with("policy.learn.batch_size", 100L));
        assertRefused("policy.collect.n_sample", "expected a multiple of env.collector_env_num 3",
            ppo.with("env.collector_env_num", 3L));
        assertRefused("pipeline.mode", "expected serial", ppo.with("pipeline.mode", "parallel"));
        assertRefused("policy.learn.batch_size", "expected at least 2 with policy.learn.adv_norm",
            ppo.with("policy.learn.batch_size", 1L));
        assertRefused("policy.learn.update_per_collect", "expected 1", ppo.with("policy.learn.update_per_collect",
            2L));
        assertRefused("policy.other.replay_buffer.replay_buffer_size", "expected policy.collect.n_sample 512",
            ppo.with("policy.other.replay_buffer.replay_buffer_size", 1024L));
        // A training call is one native call a SIGTERM waits for: 512 / 2 x 10,000 minibatches would take minutes.
        assertRefused("policy.learn.epoch_per_collect", "expected at most 39 with policy.collect.n_sample 512 and "
            + "policy.learn.batch_size 2 (a training call runs n_sample / batch_size x epoch_per_collect minibatches, "
            + "at most 10000, in one native call that a stop waits for), got 10000", ppo.with("policy.learn.batch_size",
            2L).with("policy.learn.epoch_per_collect", 10_000L));
        assertRefused("policy.learn.batch_size", "expected at least 4 (a divisor of policy.collect.n_sample 20480)",
            ppo.with("policy.collect.n_sample", 20_480L).with("policy.other.replay_buffer.replay_buffer_size",
            20_480L).with("policy.learn.batch_size", 2L).with("policy.learn.epoch_per_collect", 1L));
        assertTrue(!dir.resolve("bad").toFile().exists(), "nothing is written for a refused config");
    }

    /**
     * A service's actions on published PPO weights: the deterministic action the evaluator takes (the most likely
     * index, the Gaussian's clipped mean), the new weights after a publish, and sampling refused.
     */
    @Test
    void aServingActorShouldActAsTheEvaluatorOnThePublishedWeights()
    {
        for (final boolean discrete : new boolean[] {true, false})
        {
            final int width = discrete ? 1 : 2;
            try (PpoPolicy policy = new PpoPolicy(new PpoPolicy.Settings(3, discrete ? 4 : 2, discrete,
                new long[] {16, 16}, 8, 2, 1e-2, 0.2, false, 0.5, 0.0, true, 0.5, true), 3);
                PpoBatch batch = new PpoBatch(32, 3, width))
            {
                final java.util.SplittableRandom random = new java.util.SplittableRandom(4);
                final float[] obs = new float[32 * 3];
                for (int i = 0; i < obs.length; i++)
                {
                    obs[i] = (float)random.nextDouble(-2, 2);
                }
                final float[] actions = new float[32 * width];
                for (int i = 0; i < actions.length; i++)
                {
                    actions[i] = discrete ? random.nextInt(4) : (float)random.nextGaussian();
                }
                final float[] ones = new float[32];
                java.util.Arrays.fill(ones, 1f);
                batch.fill(obs, actions, new float[32], new float[32], ones, ones);
                final ServingActor served = ServingActor.of(policy);
                final PpoPolicy.Acting evaluator = policy.acting();
                final float[] want = new float[32 * width];
                final float[] got = new float[32 * width];
                evaluator.act(obs, 32, want, null);
                served.act(obs, 32, got);
                assertArrayEquals(want, got, 0f, "before an update");
                policy.forward(batch, org.ding4j.policy.LogSink.discard());
                served.publish();
                evaluator.act(obs, 32, want, null);
                served.act(obs, 32, got);
                assertArrayEquals(want, got, 0f, "after an update and a publish");
                if (discrete)
                {
                    assertEquals((int)want[0], served.greedy(java.util.Arrays.copyOf(obs, 3)));
                }
                assertThrows(IllegalStateException.class, () -> served.sample(obs, 1, got, null));
            }
        }
    }

    /** An env whose reward turns NaN at its third step: the rollout refuses it, naming the env, before any update. */
    @Test
    void aNonFiniteRewardShouldBeRefusedWithItsEnv()
    {
        final VectorEnv envs = VectorEnv.sync(i -> new NanReward(1 == i ? 3 : -1), 2);
        envs.reset(0);
        try (PpoPolicy policy = new PpoPolicy(new PpoPolicy.Settings(2, 2, true, new long[] {8}, 4, 1, 1e-3, 0.2,
            false, 0.5, 0.0, true, 0.5, true), 1);
            Rollout rollout = new Rollout(envs, 16, 0.99, 0.95, 2))
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> rollout.collect(policy.acting()));
            assertTrue(ex.getMessage().startsWith("reward: expected a finite value") && ex.getMessage().contains(
                "NaN (env 1)"), ex.getMessage());
            assertEquals(0, rollout.size(), "no rollout is handed to an update");
            assertEquals(0, policy.optimizer().stepCount());
        }
    }

    /** A resume's state of the wrong kind is named by its section and what was there, not by the list of keys. */
    @Test
    void aStateOfTheWrongKindIsNamedBySection()
    {
        try (PpoPolicy policy = new PpoPolicy(new PpoPolicy.Settings(2, 2, true, new long[] {8}, 4, 1, 1e-3, 0.2,
            false, 0.5, 0.0, true, 0.5, true), 1))
        {
            final java.util.Map<String, Object> state = new java.util.LinkedHashMap<>(policy.stateDict());
            state.put("shuffle", "abc");
            assertEquals("PPO state: 'shuffle': expected an integer, got a String",
                assertThrows(IllegalArgumentException.class, () -> policy.loadStateDict(state)).getMessage());
            state.put("model", java.util.List.of(1L, 2L, 3L));
            assertEquals("PPO state: 'model': expected a dict, got a list of 3 integers",
                assertThrows(IllegalArgumentException.class, () -> policy.loadStateDict(state)).getMessage());
            state.remove("model");
            assertTrue(assertThrows(IllegalArgumentException.class, () -> policy.loadModel(state)).getMessage()
                .startsWith("PPO state: 'model': expected a dict, got nothing (the state holds ["));
            // Another net's model (a SAC checkpoint's, say) is named before its missing optimizer.
            assertTrue(assertThrows(IllegalArgumentException.class, () -> policy.loadStateDict(java.util.Map.of(
                "model", java.util.Map.of("q.0.weight", 1L)))).getMessage().startsWith("PPO state dict: its 'model' is "
                + "another net's (missing keys ["));
        }
    }

    /** Two observations, two actions; the reward is NaN at step {@code nanAt} (never when negative). */
    private static final class NanReward implements Env
    {
        private final int nanAt;
        private int t;

        NanReward(final int nanAt)
        {
            this.nanAt = nanAt;
        }

        @Override
        public Box observationSpace()
        {
            return Box.of(-1, 1, 2);
        }

        @Override
        public Space actionSpace()
        {
            return new Discrete(2);
        }

        @Override
        public void reset(final long seed, final float[] obs)
        {
            reset(obs);
        }

        @Override
        public void reset(final float[] obs)
        {
            t = 0;
            obs[0] = 0.5f;
            obs[1] = -0.5f;
        }

        @Override
        public void step(final float[] action, final float[] obs, final StepResult result)
        {
            t++;
            result.set(t == nanAt ? Double.NaN : 1.0, false, false);
        }
    }

    private static void assertRefused(final String key, final String rule, final Config cfg)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> new OffPolicyPipeline(cfg));
        assertEquals(key, ex.keyPath(), ex.getMessage());
        assertTrue(ex.getMessage().contains(rule), ex.getMessage());
    }
}
