package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.ding4j.policy.PriorityFeedback;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Sum-tree sampling proportions (chi-square), importance weights, and priority updates keyed by unique id. */
class ReplayBufferTest
{
    /** Chi-square critical value for 7 degrees of freedom at p = 0.001. */
    private static final double CHI2_7DF_P001 = 24.322;
    private static final double[] PRIORITIES = {1, 2, 3, 4, 0.5, 8, 0.25, 6};

    @Test
    void sumTreeShouldDrawEachLeafInProportionToItsValue()
    {
        final SumTree tree = new SumTree(PRIORITIES.length);
        double total = 0;
        for (int i = 0; i < PRIORITIES.length; i++)
        {
            tree.set(i, PRIORITIES[i]);
            total += PRIORITIES[i];
        }
        assertEquals(total, tree.total(), 1e-12);
        assertEquals(0.25, tree.min(), 0.0);
        final int draws = 200_000;
        final long[] counts = new long[PRIORITIES.length];
        final SplittableRandom random = new SplittableRandom(11);
        for (int d = 0; d < draws; d++)
        {
            counts[tree.find(random.nextDouble() * total)]++;
        }
        assertTrue(chiSquare(counts, PRIORITIES) < CHI2_7DF_P001, () -> "chi-square "
            + chiSquare(counts, PRIORITIES) + " for counts " + java.util.Arrays.toString(counts));
        // The statistic must be able to fail: uniform expectations are far off for these priorities.
        final long[] uniform = new long[PRIORITIES.length];
        java.util.Arrays.fill(uniform, draws / PRIORITIES.length);
        assertTrue(chiSquare(uniform, PRIORITIES) > 100 * CHI2_7DF_P001);
    }

    @Test
    void sumTreeShouldSkipEmptyLeavesAtTheEdges()
    {
        final SumTree tree = new SumTree(5);
        tree.set(0, 1);
        tree.set(3, 1);
        assertEquals(0, tree.find(0.0));
        assertEquals(3, tree.find(1.0));
        assertEquals(3, tree.find(Math.nextDown(2.0)));
    }

    @Test
    @Tag("native")
    void prioritizedBufferShouldSampleByPriorityWithImportanceWeights()
    {
        final double alpha = 0.6;
        final double beta = 0.4;
        final ReplayBuffer buffer = new ReplayBuffer(PRIORITIES.length, 1, true, alpha, beta, 5);
        for (int i = 0; i < PRIORITIES.length; i++)
        {
            buffer.push(new float[] {i}, 0, i, 0f, 0f, new float[] {i}, 0);
        }
        for (int i = 0; i < PRIORITIES.length; i++)
        {
            assertTrue(buffer.update(i, i, PRIORITIES[i] - 1e-6));
        }
        double total = 0;
        double min = Double.POSITIVE_INFINITY;
        for (final double p : PRIORITIES)
        {
            total += Math.pow(p, alpha);
            min = Math.min(min, Math.pow(p, alpha));
        }
        final long[] counts = new long[PRIORITIES.length];
        final int draws = 100_000;
        try (DqnBatch batch = new DqnBatch(1, 1))
        {
            for (int d = 0; d < draws; d++)
            {
                assertTrue(buffer.sample(batch));
                final int slot = batch.bufferIndex[0];
                counts[slot]++;
                assertEquals(slot, batch.uniqueId[0]);
                assertEquals(slot, batch.action[0]);
                final double p = Math.pow(PRIORITIES[slot], alpha) / total;
                final double expected = Math.pow(PRIORITIES.length * p, -beta)
                    / Math.pow(PRIORITIES.length * min / total, -beta);
                assertEquals(expected, batch.weight[0], 1e-5);
            }
        }
        final double[] sampling = new double[PRIORITIES.length];
        for (int i = 0; i < sampling.length; i++)
        {
            sampling[i] = Math.pow(PRIORITIES[i], alpha);
        }
        final double stat = chiSquare(counts, sampling);
        assertTrue(stat < CHI2_7DF_P001, "chi-square " + stat + " for " + java.util.Arrays.toString(counts));
    }

    @Test
    void priorityUpdateShouldSkipASlotOverwrittenSinceItWasSampled()
    {
        final ReplayBuffer buffer = new ReplayBuffer(4, 1, true, 1.0, 0.4, 1);
        for (int i = 0; i < 6; i++)
        {
            // Ids 0..5; ids 4 and 5 overwrite slots 0 and 1.
            assertEquals(i, buffer.push(new float[] {i}, 0, 0, 0f, 0f, new float[] {i}, 0));
        }
        final double before = buffer.weightOf(0);
        final PriorityFeedback feedback = new PriorityFeedback();
        feedback.set(new double[] {7, 9, 3}, new int[] {0, 2, 1}, new long[] {0L, 2L, 5L}, 3);
        assertEquals(2, buffer.updatePriorities(feedback), "slot 0 holds id 4 now; id 0 is stale");
        assertEquals(before, buffer.weightOf(0), 0.0);
        assertEquals(9 + 1e-6, buffer.weightOf(2), 1e-12);
        assertEquals(3 + 1e-6, buffer.weightOf(1), 1e-12);
        assertFalse(buffer.update(3, 7, 1.0), "an id not pushed yet");
        // A new transition enters at the largest priority seen so far.
        assertTrue(buffer.update(2, 2, 0.5));
        buffer.push(new float[] {6}, 0, 0, 0f, 0f, new float[] {6}, 0);
        assertEquals(9 + 1e-6, buffer.weightOf(2), 1e-12, "id 6 in slot 2 at the max priority");
    }

    /** A NaN or infinite return or observation is refused, named with its transition, and nothing is stored. */
    @Test
    void aNonFiniteTransitionShouldBeRefusedAndNotStored()
    {
        final ReplayBuffer buffer = new ReplayBuffer(4, 2, false, 0.6, 0.4, 1);
        buffer.push(new float[] {1, 2}, 0, 0, 1f, 0.9f, new float[] {3, 4}, 0);
        final IllegalArgumentException ret = assertThrows(IllegalArgumentException.class,
            () -> buffer.push(new float[] {1, 2}, 0, 0, Float.NaN, 0.9f, new float[] {3, 4}, 0));
        assertEquals("reward (n-step return): expected a finite value from the environment, got NaN (transition 1)",
            ret.getMessage());
        final IllegalArgumentException obs = assertThrows(IllegalArgumentException.class,
            () -> buffer.push(new float[] {1, Float.POSITIVE_INFINITY}, 0, 0, 1f, 0.9f, new float[] {3, 4}, 0));
        assertEquals("observation: expected finite values from the environment, got Infinity at index 1 (transition 1)",
            obs.getMessage());
        final IllegalArgumentException next = assertThrows(IllegalArgumentException.class,
            () -> buffer.push(new float[] {1, 2}, 0, 0, 1f, 0.9f, new float[] {Float.NaN, 4}, 0));
        assertTrue(next.getMessage().startsWith("next observation: expected finite values"), next.getMessage());
        assertEquals(1, buffer.size());
        assertEquals(1, buffer.pushed());
    }

    /** Pearson's statistic of the counts against draws in proportion to the weights. */
    private static double chiSquare(final long[] counts, final double[] weights)
    {
        final double draws = java.util.Arrays.stream(counts).sum();
        final double total = java.util.Arrays.stream(weights).sum();
        double stat = 0;
        for (int i = 0; i < counts.length; i++)
        {
            final double expected = draws * weights[i] / total;
            stat += (counts[i] - expected) * (counts[i] - expected) / expected;
        }
        return stat;
    }
}
