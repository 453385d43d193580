package org.ding4j.dist;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.config.Config;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.RegressionPolicy;
import org.ding4j.torch.Threads;

/**
 * One rank of {@link DistributedTest}: joins the group, trains the 4-32-2 regression policy through the learner
 * with gradient sync and log reduce for N updates (update i of rank r draws batch {@code 1000 i + r}), prints
 * {@code iter i local=L reduced=R} after each, and writes its final flat parameters to {@code rank{r}.bin}.
 * In {@code start} mode it trains through {@code start()} and its data loader instead (batch k is
 * {@code 1000 k + r}) until the ranks agree to stop, then prints {@code STOPPED <updates>}. A failure prints
 * {@code FAILED <message>} and exits 3.
 * <p>
 * Arguments: rank world port dir updates timeoutMs [train|start|fail [masterAddr]]; in train mode it also prints
 * {@code US_PER_UPDATE u}, the mean wall time of its updates, and {@code BUCKETS n}, its gradient buckets (the
 * system property {@value #BUCKET_BYTES_PROPERTY} sets their size; 0 is the flat all-reduce).
 */
public final class DdpChild
{
    /** In {@code fail} mode rank 1's data source throws instead of making this batch. */
    static final long FAIL_AT = 25;
    /** The gradient bucket size in bytes ({@code dist.bucket_mb}); 0 is the flat all-reduce after backward. */
    static final String BUCKET_BYTES_PROPERTY = "ddp.bucket_bytes";
    /** true: the gradients go through {@link DataParallel} (c10d's Reducer, during backward) instead. */
    static final String REDUCER_PROPERTY = "ddp.reducer";
    /** true: rank 1 attaches DataParallel with another bucket cap than rank 0's (a layout the ranks must share). */
    static final String MISMATCH_PROPERTY = "ddp.mismatch";

    private DdpChild()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        Threads.configure();
        // The application opts in to SIGTERM as a stop, as the command line does.
        org.ding4j.learner.StopSignals.installForProcess();
        final int rank = Integer.parseInt(args[0]);
        final int world = Integer.parseInt(args[1]);
        final int port = Integer.parseInt(args[2]);
        final Path dir = Path.of(args[3]);
        final int updates = Integer.parseInt(args[4]);
        final Duration timeout = Duration.ofMillis(Long.parseLong(args[5]));
        final boolean fail = args.length > 6 && "fail".equals(args[6]);
        final boolean start = fail || args.length > 6 && "start".equals(args[6]);
        // A test host's address when the ranks run in network namespaces (NetnsHosts), else loopback.
        final String master = args.length > 7 ? args[7] : "127.0.0.1";
        final DistInfo info = new DistInfo(rank, world, rank, master, port);
        try (RegressionPolicy policy = new RegressionPolicy(100 + rank);
            BaseLearner<Long> learner = new BaseLearner<>(Config.empty().with("hook.save_ckpt_after_run", false)
                .with("train_iterations", (long)updates), policy, null, info, dir.resolve("exp").toString(), "learner");
            DistTraining dist = DistTraining.join(info, timeout, policy.regressor().optimizer(),
                Long.getLong(BUCKET_BYTES_PROPERTY, GradientSync.bytesOf(GradientSync.DEFAULT_BUCKET_MB))))
        {
            learner.distributed(dist);
            // The Reducer replaces the GradientSync that join attached as the optimizer's reducer.
            final DataParallel reducer = Boolean.getBoolean(REDUCER_PROPERTY) ? DataParallel.attach(dist.group(),
                policy.regressor().optimizer(), java.util.List.of(policy.regressor().mlp().module()),
                new DataParallel.Options(Long.getLong(BUCKET_BYTES_PROPERTY, 1L << 20)
                    + (Boolean.getBoolean(MISMATCH_PROPERTY) && 1 == rank ? 64 : 0), false, false)) : null;
            final double[] local = new double[1];
            // log_reduce runs at priority 10: one hook sees the rank's own value, the other the reduced one.
            learner.registerHook(new LearnerHook("record_local", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    local[0] = l.log().buffer().scalar().get("total_loss");
                }
            });
            learner.registerHook(new LearnerHook("record_reduced", 15, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final HookContext l)
                {
                    System.out.printf(Locale.ROOT, "iter %d local=%.17g reduced=%.17g%n", l.lastIter(), local[0],
                        l.log().buffer().scalar().get("total_loss"));
                    System.out.flush();
                }
            });
            if (start)
            {
                final long[] next = {0};
                learner.dataSource(size ->
                {
                    if (fail && 1 == rank && FAIL_AT == next[0])
                    {
                        throw new IllegalStateException("injected failure at batch " + FAIL_AT);
                    }
                    return 1000L * next[0]++ + rank;
                });
                learner.setupDataloader();
                learner.start();
                System.out.println("STOPPED " + learner.trainIter());
                return;
            }
            final long began = System.nanoTime();
            for (int i = 0; i < updates; i++)
            {
                learner.train(1000L * i + rank);
            }
            System.out.printf(Locale.ROOT, "US_PER_UPDATE %.1f%n", (System.nanoTime() - began) / 1e3 / updates);
            System.out.println("BUCKETS " + (null != reducer ? reducer.bucketCount()
                : dist.gradientSyncs().get(0).bucketCount()));
            final long reductions = null != reducer ? reducer.reductions() : dist.gradientSyncs().get(0).reductions();
            if (reductions != updates)
            {
                throw new IllegalStateException("expected " + updates + " gradient reductions, got " + reductions);
            }
            write(policy.regressor().parameters().group(0).values(), dir.resolve("rank" + rank + ".bin"));
            if (null != reducer)
            {
                reducer.close();
            }
            System.out.println("DONE");
        }
        catch (final RuntimeException ex)
        {
            System.out.println("FAILED " + ex.getMessage());
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }
    }

    static void write(final Tensor values, final Path file) throws IOException
    {
        final float[] floats = new float[(int)values.numel()];
        new FloatPointer(values.data_ptr()).get(floats);
        final ByteBuffer bytes = ByteBuffer.allocate(4 * floats.length).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(floats);
        Files.write(file, bytes.array());
    }
}
