package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.env.ResumableRandom;
import org.ding4j.rl.ac.ActorCritic;
import org.ding4j.rl.ac.SacPolicy;
import org.ding4j.rl.ac.Td3Policy;
import org.ding4j.rl.dqn.DqnPolicy;
import org.ding4j.rl.dqn.QNetwork;
import org.ding4j.torch.Activation;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The serving actor's Java forward against the policies' own nets (libtorch): DQN's greedy action and Q-values,
 * TD3's and SAC's deterministic and sampled actions; a publish is what the readers see; no bytes allocated per call.
 */
class ServingActorTest
{
    @BeforeAll
    static void threads()
    {
        Threads.configure();
    }

    @Test
    void greedyActionsShouldBeTheQNetworksArgmaxAndFollowThePublishes()
    {
        torch.manual_seed(3);
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(6, 3, new long[] {128, 128}, true, 32, 1e-3, 100,
            0.0, false, 0.0, Activation.RELU);
        try (DqnPolicy policy = new DqnPolicy(settings))
        {
            final ServingActor actor = ServingActor.greedy(policy);
            final float[] obs = new float[64 * 6];
            final SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < obs.length; i++)
            {
                obs[i] = (float)random.nextGaussian();
            }
            assertGreedy(policy.online(), actor, obs);
            // New weights are served only once published.
            try (org.bytedeco.pytorch.NoGradGuard noGrad = new org.bytedeco.pytorch.NoGradGuard())
            {
                policy.parameters().group(0).values().mul_(new org.bytedeco.pytorch.Scalar(-1.0));
            }
            final long before = actor.version();
            actor.publish();
            assertEquals(before + 1, actor.version());
            assertGreedy(policy.online(), actor, obs);
        }
    }

    @Test
    void argumentsThatDoNotFitAreNamedAndNothingIsWritten()
    {
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(6, 3, new long[] {16}, false, 32, 1e-3, 100,
            0.0, false, 0.0, Activation.RELU);
        try (DqnPolicy policy = new DqnPolicy(settings))
        {
            final ServingActor actor = ServingActor.greedy(policy);
            assertTrue(actor.discrete());
            final float[] actions = {7, 7};
            assertEquals("actions: expected room for 3 rows of 1 floats, got 2 floats", assertThrows(
                IllegalArgumentException.class, () -> actor.act(new float[18], 3, actions)).getMessage());
            assertEquals("rows: expected >= 1, got 0", assertThrows(IllegalArgumentException.class,
                () -> actor.act(new float[6], 0, actions)).getMessage());
            assertEquals("obs: expected 2 rows of 6 floats, got 6 floats", assertThrows(IllegalArgumentException.class,
                () -> actor.act(new float[6], 2, actions)).getMessage());
            // The ReLU would read a NaN as 0: a missing feature must not become a confident action.
            final float[] broken = new float[12];
            broken[9] = Float.NaN;
            assertEquals("obs: expected finite values, got NaN at row 1, index 3", assertThrows(
                IllegalArgumentException.class, () -> actor.act(broken, 2, actions)).getMessage());
            broken[9] = 0f;
            broken[3] = Float.NEGATIVE_INFINITY;
            assertEquals("obs: expected finite values, got -Infinity at row 0, index 3", assertThrows(
                IllegalArgumentException.class, () -> actor.greedy(broken)).getMessage());
            org.junit.jupiter.api.Assertions.assertArrayEquals(new float[] {7, 7}, actions, "nothing written");
        }
    }

    private static void assertGreedy(final QNetwork net, final ServingActor actor, final float[] obs)
    {
        final int rows = obs.length / 6;
        final float[] q = qValues(net, obs, rows);
        final float[] actions = new float[rows];
        actor.act(obs, rows, actions);
        for (int r = 0; r < rows; r++)
        {
            final int a = (int)actions[r];
            for (int k = 0; k < 3; k++)
            {
                // The chosen action's Q is the largest, within float rounding of the other summation order.
                assertTrue(q[r * 3 + a] >= q[r * 3 + k] - 1e-5f * Math.max(1, Math.abs(q[r * 3 + k])),
                    "row " + r + ": picked " + a + " of " + java.util.Arrays.toString(java.util.Arrays.copyOfRange(q,
                    r * 3, r * 3 + 3)));
            }
            assertEquals(a, actor.greedy(java.util.Arrays.copyOfRange(obs, r * 6, r * 6 + 6)));
        }
    }

    private static float[] qValues(final QNetwork net, final float[] obs, final int rows)
    {
        try (org.bytedeco.javacpp.PointerScope scope = new org.bytedeco.javacpp.PointerScope())
        {
            final org.bytedeco.pytorch.Tensor x = torch.from_blob(new org.bytedeco.javacpp.FloatPointer(obs),
                new long[] {rows, 6}).clone();
            final org.bytedeco.pytorch.Tensor q = net.forward(x).contiguous();
            final float[] out = new float[rows * 3];
            new org.bytedeco.javacpp.FloatPointer(q.data_ptr()).get(out);
            return out;
        }
    }

    @Test
    void td3AndSacActionsShouldBeThePoliciesOwn()
    {
        for (final String kind : new String[] {"td3", "sac"})
        {
            torch.manual_seed(5);
            final ActorCritic.Nets nets = new ActorCritic.Nets(3, 2, new long[] {64, 64}, new long[] {64, 64}, 16,
                0.99, 0.005, 1e-3, 1e-3);
            try (ActorCritic policy = "td3".equals(kind)
                ? new Td3Policy(new Td3Policy.Settings(nets, 2, 0.2, 0.5, 0.1), 6)
                : new SacPolicy(new SacPolicy.Settings(nets, true, 0.2, 3e-4), 6))
            {
                final ServingActor actor = ServingActor.of(policy);
                final float[] obs = new float[10 * 3];
                final SplittableRandom random = new SplittableRandom(2);
                for (int i = 0; i < obs.length; i++)
                {
                    obs[i] = (float)random.nextDouble(-1, 1);
                }
                final float[] expected = new float[20];
                final float[] served = new float[20];
                policy.act(obs, 10, expected, null);
                actor.act(obs, 10, served);
                for (int i = 0; i < 20; i++)
                {
                    assertEquals(expected[i], served[i], 1e-5, kind + " deterministic action " + i);
                }
                policy.act(obs, 10, expected, new ResumableRandom(9));
                actor.sample(obs, 10, served, new ResumableRandom(9));
                for (int i = 0; i < 20; i++)
                {
                    assertEquals(expected[i], served[i], 1e-4, kind + " sampled action " + i);
                }
            }
        }
    }

    @Test
    void aBatchOneActionShouldAllocateNothing()
    {
        torch.manual_seed(3);
        final DqnPolicy.Settings settings = new DqnPolicy.Settings(6, 3, new long[] {128, 128}, true, 32, 1e-3, 100,
            0.0, false, 0.0, Activation.RELU);
        try (DqnPolicy policy = new DqnPolicy(settings))
        {
            final ServingActor actor = ServingActor.greedy(policy);
            final float[] obs = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f};
            final float[] action = new float[1];
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            int sum = 0;
            for (int i = 0; i < 20_000; i++)
            {
                actor.act(obs, 1, action);
                sum += actor.greedy(obs);
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++)
            {
                actor.act(obs, 1, action);
                sum += actor.greedy(obs);
            }
            final long bytes = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(bytes < 1024, "40,000 calls allocated " + bytes + " bytes");
            assertTrue(sum >= 0);
        }
    }

    /** It publishes after every n-th update of the learner it is registered on, and readers see each. */
    @Test
    void publishOnShouldPublishOnTheLearnersSchedule(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir)
    {
        torch.manual_seed(4);
        final DqnPolicy.Settings settings = DqnPolicy.Settings.builder(4, 2).hidden(16).batchSize(8).build();
        final org.ding4j.rl.dqn.ReplayBuffer buffer = new org.ding4j.rl.dqn.ReplayBuffer(32, 4, false, 0,
            0, 1);
        final float[] obs = new float[4];
        for (int i = 0; i < 32; i++)
        {
            obs[i % 4] = 0.01f * i;
            buffer.push(obs, 0, i % 2, 1f, 0.97f, obs, 0);
        }
        try (DqnPolicy policy = new DqnPolicy(settings);
            org.ding4j.rl.dqn.DqnBatch batch = new org.ding4j.rl.dqn.DqnBatch(8, 4);
            org.ding4j.learner.BaseLearner<org.ding4j.rl.dqn.DqnBatch> learner =
                new org.ding4j.learner.BaseLearner<>(org.ding4j.config.Config.of(java.util.Map.of("log_policy",
                false)), policy, null, org.ding4j.dist.DistInfo.single(), dir.toString(), "learner"))
        {
            final ServingActor actor = ServingActor.greedy(policy);
            actor.publishOn(learner, 10);
            assertEquals(1, actor.version(), "published once when made");
            for (int i = 0; i < 25; i++)
            {
                assertTrue(buffer.sample(batch));
                learner.train(batch, i);
            }
            assertEquals(3, actor.version(), "published after updates 10 and 20");
            // A diverged net's weights are never served: its next update fails, and the run's end (after_run)
            // publishes nothing non-finite; the readers keep the last finite publish.
            policy.parameters().group(0).values().fill_(new org.bytedeco.pytorch.Scalar(Float.NaN));
            assertTrue(buffer.sample(batch));
            assertThrows(org.ding4j.policy.DivergedException.class, () -> learner.train(batch, 25));
            learner.callHook(org.ding4j.hook.HookPosition.AFTER_RUN);
            assertEquals(3, actor.version(), "the non-finite weights not published");
        }
    }

    /**
     * A resumed run serves the weights it loaded from its start (before its first update), not its fresh net's, and a
     * run's last updates are served when it ends: a TD3 run's final actions are served as they were by a run resumed
     * from its last checkpoint, at that run's start.
     */
    @Test
    void aResumedRunShouldServeItsLoadedWeightsFromItsStart(
        @org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir) throws Exception
    {
        final org.ding4j.config.Config user = org.ding4j.config.Config.empty().with("policy.type", "td3")
            .with("exp_name", dir.resolve("td3").toString()).with("policy.random_collect_size", 200L)
            .with("env.stop_value", 1000.0).with("pipeline.max_train_iter", 45L);
        final float[][] trained = served(new org.ding4j.rl.OffPolicyPipeline(user));
        final float[][] resumed = served(new org.ding4j.rl.OffPolicyPipeline(user.with("exp_name",
            dir.resolve("again").toString()).with("learner.hook.load_ckpt_before_run",
            dir.resolve("td3/ckpt/iteration_45.pth.tar").toString()).with("pipeline.max_train_iter", 50L)));
        org.junit.jupiter.api.Assertions.assertArrayEquals(trained[1], resumed[0], "the loaded weights, at once");

        // A service that restarts serves the saved policy without training: the same actions, from any thread.
        final ServingActor saved = org.ding4j.rl.OffPolicyPipeline.forEvaluation(user).serve(
            new org.ding4j.checkpoint.TorchCheckpointIO().read(dir.resolve("td3/ckpt/iteration_45.pth.tar")));
        final float[] actions = new float[2];
        final Thread thread = new Thread(() -> saved.act(new float[] {0.3f, -0.9f, 0.5f, -0.8f, 0.1f, 2f}, 2,
            actions));
        thread.start();
        thread.join();
        org.junit.jupiter.api.Assertions.assertArrayEquals(trained[1], actions, "the checkpoint's actor, served");
        assertThrows(IllegalArgumentException.class, () -> org.ding4j.rl.OffPolicyPipeline.forEvaluation(
            org.ding4j.config.Config.empty()).serve(new org.ding4j.checkpoint.TorchCheckpointIO().read(
            dir.resolve("td3/ckpt/iteration_45.pth.tar"))), "a TD3 checkpoint is no CartPole DQN's");
    }

    /**
     * @return the actions served for two observations when the pipeline's run started (after the publish there) and
     *     when it ended (publishing every 10 updates: the last 5 only as it ends)
     */
    private static float[][] served(final org.ding4j.rl.OffPolicyPipeline pipeline) throws Exception
    {
        final float[] obs = {0.3f, -0.9f, 0.5f, -0.8f, 0.1f, 2f};
        final float[][] actions = new float[2][2];
        // Last of all before_run hooks, the publish's (registered first at the same priority) included.
        servedRun(pipeline, 10, (learner, actor) -> learner.registerHook(new org.ding4j.hook.LearnerHook("look",
            Integer.MAX_VALUE, org.ding4j.hook.HookPosition.BEFORE_RUN)
        {
            @Override
            public void call(final org.ding4j.hook.HookContext context)
            {
                actor.act(obs, 2, actions[0]);
            }
        })).act(obs, 2, actions[1]);
        return actions;
    }

    /**
     * Runs the pipeline with a serving actor on its policy, as docs/environments.md shows.
     *
     * @param every  publish every this many updates
     * @param onMade what else to do with the learner and the actor before the run
     * @return the actor, once the run ended
     */
    private static ServingActor servedRun(final org.ding4j.rl.OffPolicyPipeline pipeline, final int every,
        final java.util.function.BiConsumer<org.ding4j.learner.BaseLearner<?>, ServingActor> onMade) throws Exception
    {
        final java.util.concurrent.atomic.AtomicReference<ServingActor> serving =
            new java.util.concurrent.atomic.AtomicReference<>();
        pipeline.onLearner(learner ->
        {
            final ServingActor actor = ServingActor.of(learner.policy());
            actor.publishOn(learner, every);
            serving.set(actor);
            onMade.accept(learner, actor);
        });
        pipeline.run(p -> { });
        return serving.get();
    }

    /**
     * A pipeline's learner hands its policy over: {@code ServingActor.of(learner.policy())} serves it while the run
     * trains, as docs/environments.md shows; another kind of policy is refused by name.
     */
    @Test
    void aPipelinesPolicyShouldBeServedThroughItsLearner(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir)
        throws Exception
    {
        final org.ding4j.rl.OffPolicyPipeline pipeline = new org.ding4j.rl.OffPolicyPipeline(
            org.ding4j.config.Config.empty().with("exp_name", dir.resolve("serve").toString())
                .with("env.stop_value", 1000.0).with("pipeline.max_train_iter", 200L));
        final java.util.concurrent.atomic.AtomicReference<org.ding4j.learner.BaseLearner<?>> ran =
            new java.util.concurrent.atomic.AtomicReference<>();
        final ServingActor served = servedRun(pipeline, 50, (learner, actor) -> ran.set(learner));
        assertEquals(7, served.version(),
            "published when made, at the start, after updates 50, 100, 150 and 200, and at the end");
        final int action = served.greedy(new float[] {0.01f, 0f, 0.02f, 0f});
        assertTrue(0 == action || 1 == action, "a CartPole action: " + action);
        final IllegalStateException closed = assertThrows(IllegalStateException.class, served::publish);
        assertTrue(closed.getMessage().contains("the policy it serves is closed"), closed.getMessage());
        assertEquals("learner " + ran.get().instanceName() + " is closed", assertThrows(IllegalStateException.class,
            () -> served.publishOn(ran.get(), 5)).getMessage(), "a closed learner's hooks would never run");
        assertEquals(action, served.greedy(new float[] {0.01f, 0f, 0.02f, 0f}), "the last publish stays");
        final IllegalStateException ended = assertThrows(IllegalStateException.class,
            () -> ServingActor.of(ran.get().policy()));
        assertTrue(ended.getMessage().startsWith("ServingActor: the policy is closed (its run ended, or it was the "
            + "evaluation's), so there are no weights to serve: serve a saved checkpoint instead"), ended.getMessage());
        final IllegalArgumentException other = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> ServingActor.of(new org.ding4j.policy.Policy<Object>()
            {
                @Override
                public void registerLogVars(final org.ding4j.policy.LogSink sink)
                {
                }

                @Override
                public void forward(final Object batch, final org.ding4j.policy.LogSink sink)
                {
                }

                @Override
                public java.util.List<String> monitorVars()
                {
                    return java.util.List.of();
                }

                @Override
                public int batchSize()
                {
                    return 1;
                }

                @Override
                public java.util.Map<String, Object> stateDict()
                {
                    return java.util.Map.of();
                }

                @Override
                public void loadStateDict(final java.util.Map<String, Object> state)
                {
                }
            }));
        assertTrue(other.getMessage().startsWith("policy: expected DqnPolicy, Td3Policy, SacPolicy or PpoPolicy, got "),
            other.getMessage());
    }
}
