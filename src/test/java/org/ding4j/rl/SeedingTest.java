package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's seed gives the same nets whatever else the process does with libtorch's one global generator, and the run
 * leaves that generator as the application had it (before, two runs started together in one JVM drew from each
 * other's seeding, and a run reseeded the application's generator).
 */
class SeedingTest
{
    @TempDir
    Path dir;

    @Test
    void aRunLeavesTheApplicationsGeneratorAsItWas() throws Exception
    {
        torch.manual_seed(123);
        final float[] expected = draw();
        torch.manual_seed(123);
        new OffPolicyPipeline(Config.empty().with("exp_name", dir.resolve("g").toString())
            .with("pipeline.max_env_step", 200L)).run(progress -> { });
        assertArrayEquals(expected, draw(), "the draws the application would have made without the run");
    }

    @Test
    void aBuildDrawsFromItsSeedWhateverAnotherThreadBuildsMeanwhile() throws Exception
    {
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final Thread other = new Thread(() -> {
            try
            {
                if (inside.await(60, TimeUnit.SECONDS))
                {
                    // Reseeds and draws: without the lock, in the middle of the build below.
                    org.ding4j.torch.Seeding.drawn(1, SeedingTest::draw);
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            done.countDown();
        }, "other-build");
        other.start();
        final float[] second = org.ding4j.torch.Seeding.drawn(9, () -> {
            draw();
            inside.countDown();
            try
            {
                // The other build cannot end while this one holds the lock: this wait can only run out.
                assertTrue(!done.await(200, TimeUnit.MILLISECONDS), "the other build ran inside this one");
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
            return draw();
        });
        assertTrue(done.await(60, TimeUnit.SECONDS));
        other.join();
        torch.manual_seed(9);
        draw();
        assertArrayEquals(draw(), second, "the build's second draw is its own seed's");
    }

    @Test
    void runsStartedTogetherEachDrawFromTheirOwnSeed() throws Exception
    {
        final OffPolicyRun.Summary alone = runIn("alone", null);
        assertTrue(alone.solved(), alone.toString());
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        try
        {
            final CountDownLatch ready = new CountDownLatch(2);
            final Future<OffPolicyRun.Summary> first = pool.submit(() -> runIn("first", ready));
            final Future<OffPolicyRun.Summary> second = pool.submit(() -> runIn("second", ready));
            for (final Future<OffPolicyRun.Summary> together : java.util.List.of(first, second))
            {
                final OffPolicyRun.Summary summary = together.get(120, TimeUnit.SECONDS);
                assertEquals(alone.envSteps(), summary.envSteps(), summary.toString());
                assertEquals(alone.trainIter(), summary.trainIter(), summary.toString());
                assertEquals(alone.bestEvalReturn(), summary.bestEvalReturn(), summary.toString());
            }
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    /** The main job's config (it solves CartPole in about 1,300 env steps), started when both threads are ready. */
    private OffPolicyRun.Summary runIn(final String name, final CountDownLatch ready) throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(Config.empty()
            .with("exp_name", dir.resolve(name).toString()));
        if (null != ready)
        {
            ready.countDown();
            assertTrue(ready.await(60, TimeUnit.SECONDS));
        }
        return pipeline.run(progress -> { });
    }

    private static float[] draw()
    {
        try (Tensor t = torch.rand(16))
        {
            final float[] values = new float[16];
            new FloatPointer(t.data_ptr()).get(values);
            return values;
        }
    }
}
