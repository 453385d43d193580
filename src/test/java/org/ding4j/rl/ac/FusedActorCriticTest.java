package org.ding4j.rl.ac;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fused native TD3 and SAC updates against libtorch autograd, compared one update at a time from the same state:
 * at each of {@value #STATES} states along the autograd run's own trajectory, the fused policy is loaded with that
 * state (nets, targets, Adam moments and step, the noise stream, TD3's delay counter, SAC's log alpha), both take
 * one update on the same batch, and what each update wrote is compared.
 * <p>
 * Why one update from the same state instead of two runs side by side: a ReLU net trained by Adam is chaotic over
 * hundreds of updates. A pre-activation within rounding of zero switches a unit, and Adam turns the changed gradient
 * into a step of the learning rate's size, so two correct runs that round differently (OpenBLAS picks other kernels
 * on AVX2 and AVX-512 processors) can end 1e-2 apart or 1e-6 apart depending on the seed and the CPU. From one
 * shared state nothing compounds: a kernel error shows at every state, a rounding-level switch at a few.
 * <p>
 * What is compared, for every optimizer (critic, actor, SAC's temperature): the gradient, read from Adam's first
 * moment (exp_avg after the step minus beta1 times exp_avg before it is (1 - beta1) g, for both paths from the same
 * exp_avg). Its relative error must be within {@value #TIGHT} at {@value #TIGHT_SHARE} of the states or more and
 * within {@value #LOOSE} at every state (one switched unit of one sample moves a 64-sample gradient by ~1e-3 of its
 * norm; a wrong term moves it by O(1)). Parameters and targets after the step must lie within {@link #STEP_BOUND}
 * of each other everywhere: Adam's step is at most (1 - beta1) / sqrt(1 - beta2) = 3.16 learning rates, so a
 * component whose true gradient is rounding noise may step either way, but never further; the update counters must
 * agree.
 */
class FusedActorCriticTest
{
    private static final int STATES = 120;
    private static final double BETA1 = 0.9;
    private static final double LR = 1e-3;
    private static final double TIGHT = 1e-5;
    private static final double TIGHT_SHARE = 0.9;
    private static final double LOOSE = 2e-2;
    /** Two opposite Adam steps of the largest size, (1 - beta1) / sqrt(1 - beta2) learning rates each. */
    private static final double STEP_BOUND = 2 * LR * (1 - BETA1) / Math.sqrt(1 - 0.999) * (1 + 1e-3);

    @BeforeAll
    static void threads()
    {
        Threads.configure();
    }

    static Stream<Arguments> cases()
    {
        return Stream.of(
            Arguments.of("td3", new long[] {64, 64}, new long[] {64, 64}, true, 1, 1L),
            Arguments.of("td3", new long[] {32}, new long[] {48, 48, 48}, true, 2, 11L),
            Arguments.of("td3", new long[] {256, 256}, new long[] {256, 256}, true, 2, 3L),
            Arguments.of("sac", new long[] {128, 128}, new long[] {128, 128}, true, 1, 11L),
            Arguments.of("sac", new long[] {128, 128}, new long[] {128, 128}, false, 1, 3L),
            Arguments.of("sac", new long[] {24}, new long[] {40, 40}, true, 1, 6L));
    }

    /** A policy of the given kind, its nets drawn from {@code seed}. */
    static ActorCritic policy(final String kind, final long[] actorHidden, final long[] criticHidden,
        final boolean autoAlpha, final int batch, final int actorFreq, final long seed)
    {
        torch.manual_seed(seed);
        final ActorCritic.Nets nets = new ActorCritic.Nets(3, 2, actorHidden, criticHidden, batch, 0.99, 0.005, LR,
            LR);
        return "td3".equals(kind) ? new Td3Policy(new Td3Policy.Settings(nets, actorFreq, 0.2, 0.5, 0.1), seed + 1)
            : new SacPolicy(new SacPolicy.Settings(nets, autoAlpha, 0.2, 3e-4), seed + 1);
    }

    /** Fills a batch with transitions from the stream (actions in [-1, 1], some terminal). */
    static void fill(final ControlBatch batch, final SplittableRandom random)
    {
        for (int i = 0; i < batch.obs.length; i++)
        {
            batch.obs[i] = (float)random.nextDouble(-1, 1);
            batch.nextObs[i] = (float)random.nextDouble(-1, 1);
        }
        for (int i = 0; i < batch.action.length; i++)
        {
            batch.action[i] = (float)random.nextDouble(-1, 1);
        }
        for (int i = 0; i < batch.size(); i++)
        {
            batch.reward[i] = (float)random.nextDouble(-16, 0);
            batch.notDone[i] = random.nextInt(10) == 0 ? 0f : 1f;
        }
    }

    @ParameterizedTest(name = "{0} actor {1} critic {2} auto alpha {3} actor every {4} seed {5}")
    @MethodSource("cases")
    void fusedMatchesAutogradFromEachState(final String kind, final long[] actorHidden, final long[] criticHidden,
        final boolean autoAlpha, final int actorFreq, final long seed)
    {
        final int batchSize = 64;
        try (ActorCritic eager = policy(kind, actorHidden, criticHidden, autoAlpha, batchSize, actorFreq, seed);
            ActorCritic fused = policy(kind, actorHidden, criticHidden, autoAlpha, batchSize, actorFreq, seed + 100);
            ControlBatch batch = new ControlBatch(batchSize, 3, 2))
        {
            fused.fusedUpdate(true);
            final List<String> keys = eager.optimizerKeys();
            final double[][] errors = new double[keys.size()][STATES];
            final SplittableRandom random = new SplittableRandom(seed);
            for (int u = 0; u < STATES; u++)
            {
                fill(batch, random);
                try (PointerScope scope = new PointerScope())
                {
                    final Map<String, Object> before = eager.stateDict();
                    fused.loadStateDict(before);
                    eager.forward(batch, LogSink.discard());
                    fused.forward(batch, LogSink.discard());
                    final Map<String, Object> a = eager.stateDict();
                    final Map<String, Object> b = fused.stateDict();
                    final String at = kind + " state " + u + ": ";
                    for (int o = 0; o < keys.size(); o++)
                    {
                        errors[o][u] = gradientError(before, a, b, keys.get(o), at);
                        assertTrue(errors[o][u] <= LOOSE, at + keys.get(o) + " gradient differs by " + errors[o][u]
                            + " of its norm (limit " + LOOSE + ")");
                    }
                    assertWithinSteps(a, b, "model", at);
                    assertWithinSteps(a, b, "target_model", at);
                    assertEquals(a.get("updates"), b.get("updates"), at + "updates");
                    assertEquals(a.get("noise_random"), b.get("noise_random"), at + "noise stream");
                    if (eager instanceof SacPolicy sacEager && fused instanceof SacPolicy sacFused)
                    {
                        assertEquals(Math.log(sacEager.alpha()), Math.log(sacFused.alpha()), 2 * 3e-4 + 1e-7,
                            at + "log alpha");
                    }
                }
            }
            for (int o = 0; o < keys.size(); o++)
            {
                final double[] sorted = errors[o].clone();
                Arrays.sort(sorted);
                final double share = (double)Arrays.stream(sorted).filter(e -> e <= TIGHT).count() / STATES;
                System.out.printf(Locale.ROOT, "%s %s: gradient error median %.2e, max %.2e, %.0f%% within %.0e%n",
                    kind, keys.get(o), sorted[STATES / 2], sorted[STATES - 1], 100 * share, TIGHT);
                assertTrue(share >= TIGHT_SHARE, kind + " " + keys.get(o) + ": the gradient was within " + TIGHT
                    + " of autograd's at " + Math.round(100 * share) + "% of the states (at least "
                    + Math.round(100 * TIGHT_SHARE) + "% required); sorted errors " + Arrays.toString(sorted));
            }
            if (eager instanceof SacPolicy sacEager && autoAlpha)
            {
                assertTrue(Math.abs(sacEager.alpha() - 0.2) > 1e-3, "alpha was learned: " + sacEager.alpha());
            }
        }
    }

    /**
     * @return ||g_fused - g_eager|| / ||g_eager|| for one optimizer's whole parameter set, the gradients read from
     *     exp_avg; 0 when the optimizer did not step (TD3's delayed actor), after checking that neither path did
     */
    private static double gradientError(final Map<String, Object> before, final Map<String, Object> a,
        final Map<String, Object> b, final String key, final String at)
    {
        final Map<?, ?> old = state(before, key);
        final Map<?, ?> stateA = state(a, key);
        final Map<?, ?> stateB = state(b, key);
        assertEquals(stateA.keySet(), stateB.keySet(), at + key + ": the same parameters stepped");
        double gradient = 0;
        double diff = 0;
        boolean stepped = false;
        for (final Object index : stateA.keySet())
        {
            final Map<?, ?> entryA = (Map<?, ?>)stateA.get(index);
            final Map<?, ?> entryB = (Map<?, ?>)stateB.get(index);
            assertEquals(entryA.get("step"), entryB.get("step"), at + key + " step");
            final Tensor ma = (Tensor)entryA.get("exp_avg");
            final Tensor mb = (Tensor)entryB.get("exp_avg");
            final Map<?, ?> entryOld = (Map<?, ?>)old.get(index);
            stepped |= null == entryOld || !entryOld.get("step").equals(entryA.get("step"));
            final Tensor g = null == entryOld ? ma : ma.sub(((Tensor)entryOld.get("exp_avg")).mul(
                new Scalar(BETA1)));
            gradient += Math.pow(g.norm().item_double(), 2);
            diff += Math.pow(ma.sub(mb).norm().item_double(), 2);
        }
        if (!stepped)
        {
            assertEquals(0.0, diff, at + key + " did not step, yet the moments differ");
            return 0.0;
        }
        return Math.sqrt(diff) / Math.max(Math.sqrt(gradient), 1e-30);
    }

    private static Map<?, ?> state(final Map<String, Object> dict, final String key)
    {
        return (Map<?, ?>)((Map<?, ?>)dict.get(key)).get("state");
    }

    /** Every tensor of {@code section} within two opposite Adam steps of the other path's. */
    private static void assertWithinSteps(final Map<String, Object> a, final Map<String, Object> b,
        final String section, final String at)
    {
        final Map<?, ?> ma = (Map<?, ?>)a.get(section);
        final Map<?, ?> mb = (Map<?, ?>)b.get(section);
        final List<String> names = new ArrayList<>();
        ma.keySet().forEach(k -> names.add(String.valueOf(k)));
        for (final String name : names)
        {
            final double diff = ((Tensor)ma.get(name)).sub((Tensor)mb.get(name)).abs().max().item_double();
            assertTrue(diff <= STEP_BOUND, at + section + "." + name + " differs by " + diff
                + " after one update (limit " + STEP_BOUND + ": two opposite Adam steps at lr " + LR + ")");
        }
    }
}
