package org.ding4j.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.RegressionPolicy;
import org.ding4j.testing.ChildJvm;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.MlpRegressor;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real Gloo process groups over loopback, one JVM per rank ({@link DdpChild}): data-parallel training through the
 * learner is bit-identical across ranks and equal to one process training on the concatenated batches; reduced
 * log values are the mean; a rank killed or hung mid-run makes the others fail within the timeout naming the
 * collective.
 */
@Tag("native")
class DistributedTest
{
    private static final int UPDATES = 50;

    @TempDir
    Path dir;

    static
    {
        Threads.configure();
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void ranksShouldTrainBitIdenticallyAndMatchOneProcessOnTheConcatenatedBatches(final int world) throws Exception
    {
        final List<ChildJvm> ranks = launch(world, UPDATES, 30_000);
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(120), () -> "rank " + rank.index + " output:\n" + rank.output());
            assertTrue(rank.printed("DONE"), rank::output);
        }
        final byte[] first = Files.readAllBytes(dir.resolve("rank0.bin"));
        for (int r = 1; r < world; r++)
        {
            assertArrayEquals(first, Files.readAllBytes(dir.resolve("rank" + r + ".bin")),
                "rank " + r + "'s parameters differ from rank 0's");
        }
        final float[] distributed = floats(first);
        final float[] single = trainOnConcatenatedBatches(world);
        double maxDiff = 0;
        for (int i = 0; i < single.length; i++)
        {
            maxDiff = Math.max(maxDiff, Math.abs(single[i] - distributed[i]));
        }
        assertTrue(maxDiff <= 1e-5, "max |single - distributed| = " + maxDiff);

        for (int iter = 1; iter <= UPDATES; iter++)
        {
            double sum = 0;
            final double reduced = reduced(ranks.get(0), iter);
            for (final ChildJvm rank : ranks)
            {
                sum += local(rank, iter);
                assertEquals(reduced, reduced(rank, iter), 0.0, "every rank holds the same reduced value");
            }
            assertEquals(sum / world, reduced, 1e-12 * Math.abs(reduced), "reduced total_loss at iteration " + iter);
        }
        assertTrue(local(ranks.get(0), UPDATES) != local(ranks.get(1), UPDATES), "ranks see different batches");
    }

    /**
     * Buckets change when each part of the gradient travels, not what is added: every element is still the sum of
     * the same two floats, so one bucket per parameter must end bit-identical to the flat all-reduce.
     */
    @Test
    void bucketsPerParameterShouldTrainBitIdenticallyToTheFlatAllReduce() throws Exception
    {
        // The flat path is one whole-buffer bucket started after backward.
        final byte[] flat = trainTwoRanks("buckets0", 1, "-D" + DdpChild.BUCKET_BYTES_PROPERTY + "=0");
        final byte[] buckets = trainTwoRanks("buckets1", 4, "-D" + DdpChild.BUCKET_BYTES_PROPERTY + "=1");
        assertArrayEquals(flat, buckets, "4 buckets (one per parameter) differ from the flat all-reduce");
    }

    /**
     * c10d's Reducer all-reduces the buckets during backward and halves before the sum; with 2 ranks each element is
     * still (a + b) / 2 exactly, so it must train bit-identically to the flat all-reduce after backward.
     */
    @Test
    void theReducerShouldTrainBitIdenticallyToTheFlatAllReduce() throws Exception
    {
        final byte[] flat = trainTwoRanks("reducer0", 1, "-D" + DdpChild.BUCKET_BYTES_PROPERTY + "=0");
        // The Reducer with a 1-byte cap: one bucket per parameter, as DDP cuts them.
        final byte[] reducer = trainTwoRanks("reducer1", 4, "-D" + DdpChild.BUCKET_BYTES_PROPERTY + "=1",
            "-D" + DdpChild.REDUCER_PROPERTY + "=true");
        assertArrayEquals(flat, reducer, "the Reducer's parameters differ from the flat all-reduce's");
    }

    /**
     * Ranks that attach DataParallel with different layouts (here the bucket cap; parameters in another order or of
     * other shapes alike) fail on both ranks naming it, before any collective of the layout's size: Gloo aborted the
     * process on mismatched sizes, and parameters in another order trained on silently apart.
     */
    @Test
    void ranksAttachingDifferentLayoutsShouldBothFailNamingIt() throws Exception
    {
        final Path runDir = Files.createDirectories(dir.resolve("mismatch"));
        final List<ChildJvm> ranks = launch(runDir, 2, UPDATES, 30_000, "train", "-D" + DdpChild.BUCKET_BYTES_PROPERTY
            + "=1", "-D" + DdpChild.REDUCER_PROPERTY + "=true", "-D" + DdpChild.MISMATCH_PROPERTY + "=true");
        for (final ChildJvm rank : ranks)
        {
            assertEquals(3, rank.await(120), () -> "rank " + rank.index + " output:\n" + rank.output());
            final String failure = failure(rank);
            assertTrue(failure.contains("compare the ranks' parameters failed on rank " + rank.index + " of 2: the "
                + "ranks' layouts differ") && failure.contains("this rank's: bucket cap " + (0 == rank.index ? 1 : 65)),
                failure);
        }
    }

    /**
     * Trains 2 ranks of {@link DdpChild} with the JVM options, checks their bucket count and that they end
     * bit-identical.
     *
     * @return rank 0's final parameters
     */
    private byte[] trainTwoRanks(final String name, final int buckets, final String... jvmArgs) throws Exception
    {
        final Path runDir = Files.createDirectories(dir.resolve(name));
        final List<ChildJvm> ranks = launch(runDir, 2, UPDATES, 30_000, "train", jvmArgs);
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(120), () -> "rank " + rank.index + " output:\n" + rank.output());
            assertEquals("BUCKETS " + buckets, rank.firstLine(l -> l.startsWith("BUCKETS ")), rank::output);
        }
        final byte[] result = Files.readAllBytes(runDir.resolve("rank0.bin"));
        assertArrayEquals(result, Files.readAllBytes(runDir.resolve("rank1.bin")), "ranks differ");
        return result;
    }

    /** Through GradientSync and through c10d's Reducer (whose all-reduces run inside backward) alike. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aKilledRankShouldMakeTheOthersFailWithinTheTimeout(final boolean reducer) throws Exception
    {
        // A 60 s timeout: a killed peer closes its connections, so rank 0 must fail long before it (a loaded
        // machine cannot make that late), and the rendezvous of two loaded JVMs has room too.
        final List<ChildJvm> ranks = launch(dir, 2, 1_000_000, 60_000, "train",
            "-D" + DdpChild.REDUCER_PROPERTY + "=" + reducer);
        assertTrue(ranks.get(1).reached.await(120, TimeUnit.SECONDS), () -> ranks.get(1).output());
        ranks.get(1).process.destroyForcibly();
        final long start = System.nanoTime();
        assertEquals(3, ranks.get(0).await(120), ranks.get(0)::output);
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds < 45, "rank 0 failed after " + seconds + " s, as if it had waited for the 60 s timeout");
        final String failure = failure(ranks.get(0));
        assertTrue(failure.contains("failed on rank 0 of 2") && (failure.contains("allreduce gradients")
            || failure.contains("log_reduce") || failure.contains("backward with gradient all-reduce")), failure);
    }

    @Test
    void aHungRankShouldMakeTheOthersFailWithTheTimeoutError() throws Exception
    {
        // 10 s: long enough for two loaded JVMs to meet at the rendezvous, which the same timeout bounds.
        final List<ChildJvm> ranks = launch(2, 1_000_000, 10_000);
        assertTrue(ranks.get(1).reached.await(120, TimeUnit.SECONDS), () -> ranks.get(1).output());
        final long pid = ranks.get(1).process.pid();
        assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start().waitFor());
        try
        {
            assertEquals(3, ranks.get(0).await(120), ranks.get(0)::output);
            final String failure = failure(ranks.get(0));
            assertTrue(failure.contains("failed on rank 0 of 2") && (failure.contains("allreduce gradients")
                || failure.contains("log_reduce")), failure);
            assertTrue(failure.toLowerCase(java.util.Locale.ROOT).contains("time"), failure);
        }
        finally
        {
            ranks.get(1).process.destroyForcibly();
        }
    }

    @Test
    void aSignalToOneRankShouldStopEveryRankAtTheSameIteration() throws Exception
    {
        final List<ChildJvm> ranks = launch(2, 1_000_000, 30_000, "start");
        assertTrue(ranks.get(1).reached.await(120, TimeUnit.SECONDS), () -> ranks.get(1).output());
        // kill(1), not Process.destroy(): destroy also closes our end of the child's output.
        assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(ranks.get(1).process.pid())).start()
            .waitFor());
        final long[] stoppedAt = new long[2];
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(60), rank::output);
            final String line = rank.firstLine(l -> l.startsWith("STOPPED "));
            stoppedAt[rank.index] = Long.parseLong(line.substring("STOPPED ".length()));
        }
        assertEquals(stoppedAt[0], stoppedAt[1], "both ranks stop after the same update");
        assertTrue(stoppedAt[0] >= 20);
        final Path interrupt = dir.resolve("exp/ckpt/" + org.ding4j.learner.BaseLearner.INTERRUPT_CHECKPOINT);
        assertTrue(Files.isRegularFile(interrupt), "rank 0 writes the interrupt checkpoint");
        try (PointerScope scope = new PointerScope())
        {
            assertEquals(stoppedAt[0], ((Number)new org.ding4j.checkpoint.TorchCheckpointIO().read(interrupt)
                .get("last_iter")).longValue());
        }
    }

    @Test
    void anExceptionOnOneRankShouldStopEveryRankAtTheSameIterationAndNameTheCause() throws Exception
    {
        final List<ChildJvm> ranks = launch(2, 1_000_000, 60_000, "fail");
        assertEquals(3, ranks.get(1).await(120), ranks.get(1)::output);
        assertTrue(failure(ranks.get(1)).contains("injected failure at batch " + DdpChild.FAIL_AT),
            ranks.get(1)::output);
        final long start = System.nanoTime();
        assertEquals(3, ranks.get(0).await(120), ranks.get(0)::output);
        // Well inside the 60 s timeout: the peer's group closing ends the collective, not the clock.
        assertTrue((System.nanoTime() - start) / 1e9 < 45, "rank 0 failed late, as if it had waited for the timeout");
        final String failure = failure(ranks.get(0));
        assertTrue(failure.contains("stop vote failed on rank 0 of 2") && failure.contains("(failed first: rank 1: ")
            && failure.contains("IllegalStateException: injected failure at batch " + DdpChild.FAIL_AT), failure);
        final Path exception = dir.resolve("exp/ckpt/" + org.ding4j.learner.BaseLearner.EXCEPTION_CHECKPOINT);
        assertTrue(Files.isRegularFile(exception), "rank 0 writes the exception checkpoint");
        try (PointerScope scope = new PointerScope())
        {
            assertEquals(DdpChild.FAIL_AT, ((Number)new org.ding4j.checkpoint.TorchCheckpointIO().read(exception)
                .get("last_iter")).longValue(), "rank 0 stops after the last update rank 1 made too");
        }
    }

    /**
     * A world of one (torchrun's {@code --nproc-per-node 1}, or no launcher's variables at all) trains as one process
     * does: the rank's sums are its own values, and the stop vote is its own.
     */
    @Test
    void aWorldOfOneShouldTrainBitIdenticallyToNoGroup() throws Exception
    {
        final DistInfo info = new DistInfo(0, 1, 0, "127.0.0.1", ChildJvm.freePort());
        final float[] joined;
        try (RegressionPolicy policy = new RegressionPolicy(100);
            BaseLearner<Long> learner = new BaseLearner<>(Config.empty().with("hook.save_ckpt_after_run", false),
                policy, null, info, dir.resolve("joined").toString(), "learner");
            DistTraining dist = DistTraining.join(info, Duration.ofSeconds(30), List.of(policy.regressor().optimizer()),
                List.of(List.of(policy.regressor().mlp().module())), GradientSync.bytesOf(1.0), ""))
        {
            learner.distributed(dist);
            for (int i = 0; i < UPDATES; i++)
            {
                learner.train(1000L * i);
            }
            assertEquals(UPDATES, learner.trainIter());
            joined = values(policy.regressor());
        }
        assertArrayEquals(trainOnConcatenatedBatches(1), joined);
    }

    private static float[] values(final MlpRegressor regressor)
    {
        final Tensor values = regressor.parameters().group(0).values();
        final float[] out = new float[(int)values.numel()];
        new FloatPointer(values.data_ptr()).get(out);
        return out;
    }

    /** One process training on every rank's batch at once, from rank 0's initial weights. */
    private static float[] trainOnConcatenatedBatches(final int world)
    {
        torch.manual_seed(100);
        try (MlpRegressor regressor = new MlpRegressor(Mlp.of(4, 32, 2), AdamConfig.adam(1e-2), 1.0))
        {
            for (int i = 0; i < UPDATES; i++)
            {
                try (PointerScope scope = new PointerScope())
                {
                    final TensorVector xs = new TensorVector();
                    final TensorVector ys = new TensorVector();
                    for (int r = 0; r < world; r++)
                    {
                        final Tensor[] xy = RegressionPolicy.batch(1000L * i + r);
                        xs.push_back(xy[0]);
                        ys.push_back(xy[1]);
                    }
                    regressor.step(torch.cat(xs), torch.cat(ys));
                }
            }
            return values(regressor);
        }
    }

    private List<ChildJvm> launch(final int world, final int updates, final long timeoutMs) throws IOException
    {
        return launch(world, updates, timeoutMs, "train");
    }

    private List<ChildJvm> launch(final int world, final int updates, final long timeoutMs, final String mode)
        throws IOException
    {
        return launch(dir, world, updates, timeoutMs, mode);
    }

    private static List<ChildJvm> launch(final Path dir, final int world, final int updates, final long timeoutMs,
        final String mode, final String... jvmArgs) throws IOException
    {
        final int port = ChildJvm.freePort();
        final List<ChildJvm> ranks = new ArrayList<>();
        for (int r = 0; r < world; r++)
        {
            final List<String> command = ChildJvm.javaCommand(dir, DdpChild.class.getName());
            // JVM options go before the class path and main class.
            command.addAll(1, List.of(jvmArgs));
            command.addAll(List.of(Integer.toString(r), Integer.toString(world), Integer.toString(port),
                dir.toString(), Integer.toString(updates), Long.toString(timeoutMs), mode));
            ranks.add(ChildJvm.start(r, new ProcessBuilder(command), line -> line.startsWith("iter 20 ")));
        }
        return ranks;
    }

    private static float[] floats(final byte[] bytes)
    {
        final float[] out = new float[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
        return out;
    }

    private static double local(final ChildJvm rank, final int iter)
    {
        return field(rank, iter, "local=");
    }

    private static double reduced(final ChildJvm rank, final int iter)
    {
        return field(rank, iter, "reduced=");
    }

    private static double field(final ChildJvm rank, final int iter, final String name)
    {
        final String line = rank.firstLine(l -> l.startsWith("iter " + iter + " "));
        final int at = line.indexOf(name) + name.length();
        final int end = line.indexOf(' ', at);
        return Double.parseDouble(line.substring(at, end < 0 ? line.length() : end));
    }

    private static String failure(final ChildJvm rank)
    {
        return rank.firstLine(l -> l.startsWith("FAILED "));
    }
}
