package org.ding4j.rl.ac;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;

import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A TD3 or SAC policy saved to a real checkpoint file and loaded into a policy built from another seed continues
 * exactly as the straight run (nets, targets, optimizers, the noise stream and TD3's delay counter); bad batches and
 * environment values are refused by name.
 */
class ActorCriticStateTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void threads()
    {
        Threads.configure();
    }

    @ParameterizedTest(name = "{0} fused {1}")
    @CsvSource({"td3, true", "td3, false", "sac, true", "sac, false"})
    void resumeFromAFileEqualsTheStraightRun(final String kind, final boolean fused) throws Exception
    {
        final long[] h = {32, 32};
        try (ActorCritic straight = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
            ActorCritic first = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
            ActorCritic resumed = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 99);
            ControlBatch batch = new ControlBatch(32, 3, 2))
        {
            straight.fusedUpdate(fused);
            first.fusedUpdate(fused);
            resumed.fusedUpdate(fused);
            final SplittableRandom a = new SplittableRandom(8);
            final SplittableRandom b = new SplittableRandom(8);
            // 137: a multiple of no schedule (TD3's delay of 2 included), so the next update is an actor turn only
            // if the counter came back.
            for (int u = 0; u < 137; u++)
            {
                FusedActorCriticTest.fill(batch, a);
                straight.forward(batch, LogSink.discard());
                FusedActorCriticTest.fill(batch, b);
                first.forward(batch, LogSink.discard());
            }
            final Path file = dir.resolve("ckpt.pth.tar");
            new TorchCheckpointIO().write(file, first.stateDict());
            resumed.loadStateDict(new TorchCheckpointIO().read(file));
            for (int u = 0; u < 30; u++)
            {
                FusedActorCriticTest.fill(batch, a);
                straight.forward(batch, LogSink.discard());
                FusedActorCriticTest.fill(batch, b);
                resumed.forward(batch, LogSink.discard());
            }
            assertTrue(straight.actorParameters().group(0).values().equal(resumed.actorParameters().group(0).values()),
                "actor bit-identical");
            assertTrue(straight.criticParameters().group(0).values().equal(
                resumed.criticParameters().group(0).values()), "critic bit-identical");
            assertTrue(straight.criticTargetParameters().group(0).values().equal(
                resumed.criticTargetParameters().group(0).values()), "critic target bit-identical");
            assertEquals(straight.stateDict().get("noise_random"), resumed.stateDict().get("noise_random"));
            assertEquals(167L, resumed.updates());
        }
    }

    /**
     * The twin critics on two threads ({@code update_threads: 2}) write the same bits as on one: 60 updates on the same
     * batches, then every net, target, optimizer state and statistic compared exactly (a hung helper fails the test
     * instead of the suite).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"td3", "sac"})
    void twoThreadsShouldUpdateBitForBitAsOne(final String kind)
    {
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(120), () ->
        {
            final long[] h = {32, 32};
            try (ActorCritic one = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
                ActorCritic two = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
                ControlBatch batch = new ControlBatch(32, 3, 2))
            {
                one.fusedUpdate(true);
                two.updateThreads(2);
                two.fusedUpdate(true);
                final SplittableRandom random = new SplittableRandom(12);
                for (int u = 0; u < 60; u++)
                {
                    FusedActorCriticTest.fill(batch, random);
                    one.forward(batch, LogSink.discard());
                    two.forward(batch, LogSink.discard());
                    assertEquals(one.fused.criticLoss(), two.fused.criticLoss(), 0.0, "critic loss at " + u);
                    assertEquals(one.fused.actorLoss(), two.fused.actorLoss(), 0.0, "actor loss at " + u);
                }
                assertTrue(one.actorParameters().group(0).values().equal(two.actorParameters().group(0).values()),
                    "actor");
                assertTrue(one.criticParameters().group(0).values().equal(two.criticParameters().group(0).values()),
                    "critic");
                assertTrue(one.criticTargetParameters().group(0).values().equal(
                    two.criticTargetParameters().group(0).values()), "critic target");
                two.updateThreads(1);
                FusedActorCriticTest.fill(batch, random);
                one.forward(batch, LogSink.discard());
                two.forward(batch, LogSink.discard());
                assertTrue(one.criticParameters().group(0).values().equal(two.criticParameters().group(0).values()),
                    "back on one thread");
            }
        });
    }

    /**
     * A data-parallel run reduces each gradient between the fused kernel's stages: with reducers that leave the
     * gradients as they are, the staged update must be the single call bit for bit, each reducer called once per
     * step of its optimizer (TD3's actor every second update).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"td3", "sac"})
    void theStagedUpdateOfADataParallelRunEqualsTheSingleCall(final String kind)
    {
        final long[] h = {32, 32};
        try (ActorCritic whole = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
            ActorCritic staged = FusedActorCriticTest.policy(kind, h, h, true, 32, 2, 3);
            ControlBatch batch = new ControlBatch(32, 3, 2))
        {
            whole.fusedUpdate(true);
            staged.fusedUpdate(true);
            final java.util.List<org.ding4j.torch.FusedAdam> optimizers = staged.optimizers();
            final int[] calls = new int[optimizers.size()];
            for (int i = 0; i < optimizers.size(); i++)
            {
                final int k = i;
                final org.ding4j.torch.FlatParameters own = optimizers.get(i).parameters();
                optimizers.get(i).gradientReducer(params -> {
                    assertTrue(own == params, "each reducer gets its own optimizer's parameters");
                    calls[k]++;
                });
            }
            final SplittableRandom a = new SplittableRandom(5);
            final SplittableRandom b = new SplittableRandom(5);
            for (int u = 0; u < 20; u++)
            {
                FusedActorCriticTest.fill(batch, a);
                whole.forward(batch, LogSink.discard());
                FusedActorCriticTest.fill(batch, b);
                staged.forward(batch, LogSink.discard());
            }
            assertTrue(whole.actorParameters().group(0).values().equal(staged.actorParameters().group(0).values()),
                "actor bit-identical");
            assertTrue(whole.criticParameters().group(0).values().equal(staged.criticParameters().group(0).values()),
                "critic bit-identical");
            assertTrue(whole.criticTargetParameters().group(0).values().equal(
                staged.criticTargetParameters().group(0).values()), "critic target bit-identical");
            if ("sac".equals(kind))
            {
                assertTrue(((org.bytedeco.pytorch.Tensor)whole.stateDict().get("log_alpha")).equal(
                    (org.bytedeco.pytorch.Tensor)staged.stateDict().get("log_alpha")), "temperature bit-identical");
            }
            // TD3: [actor, critic], the actor every second update; SAC: [critic, actor, alpha] every update.
            assertEquals("td3".equals(kind) ? "[10, 20]" : "[20, 20, 20]", java.util.Arrays.toString(calls));
            optimizers.get(0).gradientReducer(null);
            FusedActorCriticTest.fill(batch, b);
            final IllegalStateException half = assertThrows(IllegalStateException.class,
                () -> staged.forward(batch, LogSink.discard()));
            assertTrue(half.getMessage().contains("either every optimizer"), half::getMessage);
        }
    }

    @Test
    void refusesAMissingOptimizerAndAMismatchedBatch()
    {
        final long[] h = {16};
        try (ActorCritic policy = FusedActorCriticTest.policy("sac", h, h, true, 8, 1, 1);
            ControlBatch wrongAction = new ControlBatch(8, 3, 1))
        {
            final Map<String, Object> state = policy.stateDict();
            state.remove("optimizer_policy");
            final IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> policy.loadStateDict(state));
            assertTrue(missing.getMessage().contains("optimizer_policy"), missing.getMessage());
            final IllegalArgumentException shape = assertThrows(IllegalArgumentException.class,
                () -> policy.forward(wrongAction, LogSink.discard()));
            assertTrue(shape.getMessage().contains("action width 2") && shape.getMessage().contains("action width 1"),
                shape.getMessage());
        }
    }

    @Test
    void theActorAloneLoadsOnlyFromThisAlgorithmsModel()
    {
        final long[] h = {16};
        try (ActorCritic policy = FusedActorCriticTest.policy("td3", h, h, true, 8, 1, 1);
            ActorCritic other = FusedActorCriticTest.policy("td3", h, h, true, 8, 1, 1))
        {
            final Map<String, Object> state = policy.stateDict();
            other.loadActor(state);
            // A checkpoint of another algorithm whose actor has the same shapes (PPO's Gaussian head has log_std).
            @SuppressWarnings("unchecked")
            final Map<String, Object> model = (Map<String, Object>)state.get("model");
            model.put("log_std", model.get("actor.0.weight"));
            final IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                () -> other.loadActor(state));
            assertTrue(foreign.getMessage().startsWith("model: Td3Policy's model has no [log_std]"),
                foreign.getMessage());
        }
    }

    @Test
    void theFusedUpdateRefusesTensorsOfAnotherShapeBeforeTheNativeCall()
    {
        final long[] h = {16};
        try (ActorCritic policy = FusedActorCriticTest.policy("td3", h, h, true, 8, 1, 1);
            ControlBatch batch = new ControlBatch(8, 3, 2);
            ControlBatch wide = new ControlBatch(8, 4, 2))
        {
            policy.fusedUpdate(true);
            final IllegalArgumentException obs = assertThrows(IllegalArgumentException.class,
                () -> policy.fused.bind(wide.obsTensor(), batch.actionTensor(), batch.rewardTensor(),
                    batch.nextObsTensor(), batch.notDoneTensor(), batch.actionTensor(), null));
            assertTrue(obs.getMessage().contains("obs must be") && obs.getMessage().contains("[8, 3]"),
                obs.getMessage());
            final IllegalArgumentException noise = assertThrows(IllegalArgumentException.class,
                () -> policy.fused.bind(batch.obsTensor(), batch.actionTensor(), batch.rewardTensor(),
                    batch.nextObsTensor(), batch.notDoneTensor(), batch.rewardTensor(), null));
            assertTrue(noise.getMessage().contains("noise must be"), noise.getMessage());
        }
    }

    @Test
    void refusesNonFiniteEnvironmentValuesBeforeStoringThem()
    {
        final TransitionBuffer buffer = new TransitionBuffer(4, 3, 1, 0);
        final float[] obs = {0, 1, 0};
        final float[] action = {0.5f};
        final IllegalArgumentException reward = assertThrows(IllegalArgumentException.class,
            () -> buffer.push(obs, 0, action, 0, Double.NaN, obs, 0, false));
        assertTrue(reward.getMessage().startsWith("reward:"), reward.getMessage());
        final float[] bad = {0, Float.POSITIVE_INFINITY, 0};
        final IllegalArgumentException observation = assertThrows(IllegalArgumentException.class,
            () -> buffer.push(obs, 0, action, 0, -1.0, bad, 0, false));
        assertTrue(observation.getMessage().startsWith("next observation:")
            && observation.getMessage().contains("Infinity"), observation.getMessage());
        assertEquals(0, buffer.size(), "nothing stored");
    }

    @Test
    void refusesBadSettingsByKey()
    {
        final IllegalArgumentException tau = assertThrows(IllegalArgumentException.class,
            () -> new ActorCritic.Nets(3, 1, new long[] {8}, new long[] {8}, 4, 0.99, -0.5, 1e-3, 1e-3));
        assertTrue(tau.getMessage().contains("learn.target_theta") && tau.getMessage().contains("-0.5"),
            tau.getMessage());
        final ActorCritic.Nets nets = new ActorCritic.Nets(3, 1, new long[] {8}, new long[] {8}, 4, 0.99, 0.5, 1e-3,
            1e-3);
        final IllegalArgumentException clip = assertThrows(IllegalArgumentException.class,
            () -> new Td3Policy.Settings(nets, 2, 0.2, -0.1, 0.1));
        assertTrue(clip.getMessage().contains("learn.noise_range.max") && clip.getMessage().contains("-0.1"),
            clip.getMessage());
    }
    /**
     * Another algorithm's checkpoint of the same keys (SAC's actor outputs a mean and a log-std per action, TD3's an
     * action) is refused for its model's shapes first, both ways, before the optimizer state it lacks is.
     */
    @Test
    void anotherAlgorithmsCheckpointShouldBeRefusedForItsModel()
    {
        try (ActorCritic td3 = FusedActorCriticTest.policy("td3", new long[] {16}, new long[] {16}, true, 4, 1, 1L);
            ActorCritic sac = FusedActorCriticTest.policy("sac", new long[] {16}, new long[] {16}, true, 4, 1, 2L))
        {
            final IllegalArgumentException intoTd3 = assertThrows(IllegalArgumentException.class,
                () -> td3.loadStateDict(sac.stateDict()));
            assertTrue(intoTd3.getMessage().startsWith("Td3Policy state dict: its 'model' is another net's")
                && intoTd3.getMessage().contains("mismatched [actor.2.weight: checkpoint has shape [4, 16], the "
                + "model [2, 16]"), intoTd3.getMessage());
            final IllegalArgumentException intoSac = assertThrows(IllegalArgumentException.class,
                () -> sac.loadStateDict(td3.stateDict()));
            assertTrue(intoSac.getMessage().startsWith("SacPolicy state dict: its 'model' is another net's"),
                intoSac.getMessage());
            // The actor alone (evaluation, serving) says which net and why too.
            final IllegalArgumentException actorOnly = assertThrows(IllegalArgumentException.class,
                () -> td3.loadActor(sac.stateDict()));
            assertTrue(actorOnly.getMessage().startsWith("model: Td3Policy's actor does not fit the checkpoint's "
                + "'actor.' entries (named below without 'actor.'; a checkpoint of another algorithm or net size?): ")
                && actorOnly.getMessage().contains("mismatched [2.weight: checkpoint has shape [4, 16]"),
                actorOnly.getMessage());
        }
    }
}
