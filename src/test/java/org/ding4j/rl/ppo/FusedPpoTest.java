package org.ding4j.rl.ppo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.FusedPpo;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fused native PPO update against libtorch autograd. At the first state and at each of {@value #STATES} states
 * along the autograd policy's own trajectory (each state: the autograd policy's weights and Adam moments after a
 * whole rollout's update, loaded into the fused policy), both compute one minibatch's gradients with no step, and
 * the relative error of the fused gradient ({@code ||g_fused - g_autograd|| / ||g_autograd||}) and of each loss is
 * compared. At the first state it must be within {@value #TIGHT}; along the trajectory within {@value #TIGHT} at
 * {@value #TIGHT_SHARE} of the states and within {@value #LOOSE} at every one. Why not every state at 1e-5: a ratio
 * within rounding of the clip's bound, or a clipped value error within rounding of the plain one, switches one row's
 * term on or off (or halves it), which moves a minibatch's gradient by about one row's share of it; a wrong term moves
 * it by O(1) at every state. Then one whole rollout (every epoch's minibatches) from the same state through each path:
 * the same number of iterations, the same optimizer steps, the first minibatch's statistics within {@value #TIGHT}.
 */
class FusedPpoTest
{
    @TempDir
    Path dir;

    private static final int STATES = 40;
    private static final int ROWS = 256;
    private static final int MINIBATCH = 64;
    private static final double TIGHT = 1e-5;
    private static final double TIGHT_SHARE = 0.9;
    private static final double LOOSE = 5e-2;

    @BeforeAll
    static void threads()
    {
        Threads.configure(1, 1, 1);
    }

    static Stream<Arguments> cases()
    {
        return Stream.of(
            Arguments.of(true, new long[] {64, 64}, false, 0.5, 1L),
            Arguments.of(true, new long[] {32, 48, 32}, true, 0.0, 2L),
            Arguments.of(false, new long[] {64, 64}, true, 0.5, 3L),
            Arguments.of(false, new long[] {24}, false, 0.0, 4L));
    }

    private static PpoPolicy policy(final boolean discrete, final long[] hidden, final boolean valueClip,
        final double gradClip, final boolean fused, final long seed)
    {
        org.bytedeco.pytorch.global.torch.manual_seed(seed);
        return new PpoPolicy(new PpoPolicy.Settings(discrete ? 4 : 3, discrete ? 3 : 2, discrete, hidden, MINIBATCH, 3,
            1e-3, 0.2, valueClip, 0.5, 0.01, true, gradClip, fused), seed + 5);
    }

    /**
     * A rollout from the stream: old log-probabilities near the fresh policy's (a categorical of 3 near log 1/3, a
     * unit Gaussian's at the action), spread so that some ratios fall outside the clip.
     */
    private static PpoBatch rollout(final boolean discrete, final SplittableRandom random)
    {
        final int obsWidth = discrete ? 4 : 3;
        final int actionWidth = discrete ? 1 : 2;
        final float[] obs = new float[ROWS * obsWidth];
        final float[] actions = new float[ROWS * actionWidth];
        final float[] logp = new float[ROWS];
        final float[] values = new float[ROWS];
        final float[] adv = new float[ROWS];
        final float[] ret = new float[ROWS];
        for (int i = 0; i < obs.length; i++)
        {
            obs[i] = (float)random.nextDouble(-2, 2);
        }
        for (int r = 0; r < ROWS; r++)
        {
            double lp = 0;
            for (int k = 0; k < actionWidth; k++)
            {
                final double a = discrete ? random.nextInt(3) : random.nextGaussian();
                actions[r * actionWidth + k] = (float)a;
                lp += discrete ? Math.log(1.0 / 3) : -0.5 * a * a - 0.5 * Math.log(2 * Math.PI);
            }
            logp[r] = (float)(lp + 0.2 * random.nextGaussian());
            values[r] = (float)random.nextGaussian();
            adv[r] = (float)random.nextGaussian();
            ret[r] = values[r] + (float)(0.3 * random.nextGaussian());
        }
        final PpoBatch batch = new PpoBatch(ROWS, obsWidth, actionWidth);
        batch.fill(obs, actions, logp, values, adv, ret);
        return batch;
    }

    @ParameterizedTest(name = "discrete {0} hidden {1} value clip {2} grad clip {3} seed {4}")
    @MethodSource("cases")
    void fusedGradientsMatchAutogradAlongTheTrajectory(final boolean discrete, final long[] hidden,
        final boolean valueClip, final double gradClip, final long seed)
    {
        try (PpoPolicy eager = policy(discrete, hidden, valueClip, gradClip, false, seed);
            PpoPolicy fused = policy(discrete, hidden, valueClip, gradClip, true, seed + 100))
        {
            final SplittableRandom random = new SplittableRandom(seed);
            final double[] errors = new double[STATES];
            for (int s = 0; s < STATES; s++)
            {
                try (PointerScope scope = new PointerScope(); PpoBatch batch = rollout(discrete, random))
                {
                    fused.loadStateDict(eager.stateDict());
                    final int[] rows = random.ints(MINIBATCH, 0, ROWS).toArray();
                    final double[] lossEager = eager.gradients(batch, rows);
                    final float[] gEager = grads(eager);
                    final double[] lossFused = fused.gradients(batch, rows);
                    final float[] gFused = grads(fused);
                    errors[s] = relativeError(gFused, gEager);
                    final String at = "state " + s + ": ";
                    final double lossError = lossError(lossFused, lossEager);
                    if (0 == s)
                    {
                        assertTrue(errors[s] <= TIGHT, at + "gradient error " + errors[s]);
                        assertTrue(lossError <= TIGHT, at + "losses " + Arrays.toString(lossFused) + " against "
                            + Arrays.toString(lossEager));
                    }
                    assertTrue(errors[s] <= LOOSE, at + "gradient error " + errors[s] + " (limit " + LOOSE + ")");
                    assertTrue(lossError <= LOOSE, at + "losses " + Arrays.toString(lossFused) + " against "
                        + Arrays.toString(lossEager));
                    // Along the trajectory: a whole rollout's update through autograd.
                    eager.forward(batch, LogSink.discard());
                }
            }
            final double[] sorted = errors.clone();
            Arrays.sort(sorted);
            final double share = (double)Arrays.stream(sorted).filter(e -> e <= TIGHT).count() / STATES;
            System.out.printf(Locale.ROOT, "ppo discrete %s: gradient error median %.2e, max %.2e, %.0f%% within "
                + "%.0e%n", discrete, sorted[STATES / 2], sorted[STATES - 1], 100 * share, TIGHT);
            assertTrue(share >= TIGHT_SHARE, "the gradient was within " + TIGHT + " at " + Math.round(100 * share)
                + "% of the states; sorted errors " + Arrays.toString(sorted));
        }
    }

    /** One rollout's whole update through each path from the same state: iterations, steps, first statistics. */
    @ParameterizedTest(name = "discrete {0}")
    @MethodSource("cases")
    void aWholeRolloutShouldCountAndLogAsAutograd(final boolean discrete, final long[] hidden,
        final boolean valueClip, final double gradClip, final long seed)
    {
        try (PpoPolicy eager = policy(discrete, hidden, valueClip, gradClip, false, seed);
            PpoPolicy fused = policy(discrete, hidden, valueClip, gradClip, true, seed + 100);
            PpoBatch batch = rollout(discrete, new SplittableRandom(seed)))
        {
            fused.loadStateDict(eager.stateDict());
            final Recording a = new Recording();
            final Recording b = new Recording();
            eager.registerLogVars(a);
            fused.registerLogVars(b);
            eager.forward(batch, a);
            fused.forward(batch, b);
            assertEquals(3 * ROWS / MINIBATCH, a.updates.size());
            assertEquals(a.updates.size(), b.updates.size());
            assertEquals(eager.optimizer().stepCount(), fused.optimizer().stepCount());
            final double[] first = a.updates.get(0);
            final double[] second = b.updates.get(0);
            for (int k = 0; k < first.length; k++)
            {
                assertEquals(first[k], second[k], TIGHT * Math.max(1, Math.abs(first[k])), "the first minibatch's "
                    + a.names.get(k));
            }
            for (final double[] update : b.updates)
            {
                assertTrue(Arrays.stream(update).allMatch(Double::isFinite), Arrays.toString(update));
            }
        }
    }

    /**
     * A policy saved to a real checkpoint file and loaded into one built from another seed continues exactly as the
     * straight run: nets, Adam's moments and step, the minibatch shuffle's stream.
     */
    @ParameterizedTest(name = "discrete {0} fused {1}")
    @CsvSource({"true, true", "true, false", "false, true", "false, false"})
    void resumeFromAFileEqualsTheStraightRun(final boolean discrete, final boolean fused) throws Exception
    {
        final long[] h = {32, 32};
        try (PpoPolicy straight = policy(discrete, h, true, 0.5, fused, 3);
            PpoPolicy first = policy(discrete, h, true, 0.5, fused, 3);
            PpoPolicy resumed = policy(discrete, h, true, 0.5, fused, 99))
        {
            final SplittableRandom a = new SplittableRandom(8);
            final SplittableRandom b = new SplittableRandom(8);
            for (int round = 0; round < 5; round++)
            {
                final PpoPolicy second = round < 3 ? first : resumed;
                if (3 == round)
                {
                    final Path file = dir.resolve("ckpt.pth.tar");
                    new TorchCheckpointIO().write(file, first.stateDict());
                    try (PointerScope scope = new PointerScope())
                    {
                        resumed.loadStateDict(new TorchCheckpointIO().read(file));
                    }
                }
                try (PpoBatch x = rollout(discrete, a); PpoBatch y = rollout(discrete, b))
                {
                    straight.forward(x, LogSink.discard());
                    second.forward(y, LogSink.discard());
                }
            }
            assertTrue(straight.parameters().group(0).values().equal(resumed.parameters().group(0).values()),
                "nets bit-identical");
            assertEquals(straight.stateDict().get("shuffle"), resumed.stateDict().get("shuffle"));
            assertEquals(straight.optimizer().stepCount(), resumed.optimizer().stepCount());
        }
    }

    /**
     * A data-parallel rank runs each minibatch in two native calls with the all-reduce between them: with a reducer
     * that leaves the gradients as they are, that must be the single call bit for bit, the reducer called once per
     * minibatch with the optimizer's parameters.
     */
    @Test
    void theStagedUpdateOfADataParallelRankEqualsTheSingleCall()
    {
        final long[] h = {32, 32};
        try (PpoPolicy whole = policy(false, h, true, 0.5, true, 4);
            PpoPolicy staged = policy(false, h, true, 0.5, true, 4))
        {
            final int[] calls = new int[1];
            staged.optimizer().gradientReducer(params -> {
                assertTrue(staged.parameters() == params, "the optimizer's parameters");
                calls[0]++;
            });
            final SplittableRandom a = new SplittableRandom(5);
            final SplittableRandom b = new SplittableRandom(5);
            for (int round = 0; round < 2; round++)
            {
                try (PpoBatch x = rollout(false, a); PpoBatch y = rollout(false, b))
                {
                    whole.forward(x, LogSink.discard());
                    staged.forward(y, LogSink.discard());
                }
            }
            assertTrue(whole.parameters().group(0).values().equal(staged.parameters().group(0).values()),
                "bit-identical");
            assertEquals(2 * 3 * ROWS / MINIBATCH, calls[0]);
            assertEquals(whole.optimizer().stepCount(), staged.optimizer().stepCount());
        }
    }

    /** The actor's and the critic's halves on two threads write the same bits as on one. */
    @ParameterizedTest(name = "discrete {0}")
    @CsvSource({"true", "false"})
    void twoThreadsShouldUpdateBitForBitAsOne(final boolean discrete)
    {
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(120), () ->
        {
            final long[] h = {32, 32};
            try (PpoPolicy one = policy(discrete, h, true, 0.5, true, 6);
                PpoPolicy two = policy(discrete, h, true, 0.5, true, 6))
            {
                two.updateThreads(2);
                final SplittableRandom a = new SplittableRandom(7);
                final SplittableRandom b = new SplittableRandom(7);
                for (int round = 0; round < 3; round++)
                {
                    try (PpoBatch x = rollout(discrete, a); PpoBatch y = rollout(discrete, b))
                    {
                        one.forward(x, LogSink.discard());
                        two.forward(y, LogSink.discard());
                    }
                }
                assertTrue(one.parameters().group(0).values().equal(two.parameters().group(0).values()),
                    "bit-identical");
                two.updateThreads(1);
            }
        });
    }

    /** A stored discrete action that is not an action is refused with its row, before any gradient is computed. */
    @Test
    void aDiscreteActionOutsideTheSpaceShouldBeRefusedByRow()
    {
        try (PpoPolicy fused = policy(true, new long[] {16}, false, 0.5, true, 9L);
            PpoBatch batch = rollout(true, new SplittableRandom(9)))
        {
            new FloatPointer(batch.actions().data_ptr()).put(70, 3f);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> fused.gradients(batch, java.util.stream.IntStream.range(40, 40 + MINIBATCH).toArray()));
            assertTrue(ex.getMessage().contains("row 70") && ex.getMessage().contains("[0, 3)"), ex.getMessage());
            assertEquals(0, fused.optimizer().stepCount());
        }
    }

    private static float[] grads(final PpoPolicy policy)
    {
        final Tensor g = policy.parameters().group(0).grads();
        final float[] out = new float[(int)g.numel()];
        new FloatPointer(g.data_ptr()).get(out);
        return out;
    }

    private static double relativeError(final float[] got, final float[] want)
    {
        double diff = 0;
        double norm = 0;
        for (int i = 0; i < want.length; i++)
        {
            diff += Math.pow(got[i] - want[i], 2);
            norm += Math.pow(want[i], 2);
        }
        return Math.sqrt(diff / Math.max(norm, 1e-60));
    }

    private static double lossError(final double[] got, final double[] want)
    {
        double worst = 0;
        for (int k = 0; k < want.length; k++)
        {
            worst = Math.max(worst, Math.abs(got[k] - want[k]) / Math.max(1, Math.abs(want[k])));
        }
        return worst;
    }

    /** Every update's values, in registration order. */
    private static final class Recording implements LogSink
    {
        final List<String> names = new ArrayList<>();
        final List<double[]> updates = new ArrayList<>();

        @Override
        public int register(final String key)
        {
            names.add(key);
            return names.size() - 1;
        }

        @Override
        public void put(final int index, final double value)
        {
            if (updates.isEmpty())
            {
                updates.add(new double[names.size()]);
            }
            updates.get(updates.size() - 1)[index] = value;
        }

        @Override
        public void value(final String key, final Object value)
        {
        }

        @Override
        public void priority(final double[] values, final int valueCount, final int[] slots, final long[] ids,
            final int itemCount)
        {
        }

        @Override
        public void nextUpdate()
        {
            updates.add(new double[names.size()]);
        }
    }
}
