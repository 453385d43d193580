package org.ding4j.torch;

import java.util.concurrent.ThreadFactory;

import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;

/**
 * The one place that sets libtorch's and OpenBLAS's thread pools, once per process, before training starts.
 * <p>
 * Why it exists: the JavaCPP libtorch links OpenBLAS (its own pthread pool) and libgomp (libtorch's intra-op pool,
 * spin-waiting by default). With both pools at their defaults on a 2-core machine they fight over the cores and
 * an update of a small MLP takes 23 ms instead of 0.5 ms (docs/design.md; benchmarks/README.md has the numbers).
 * <p>
 * The rule, measured in {@code benchmarks/} ({@code ThreadsBenchmark}):
 * <ul>
 *   <li>intra-op threads = 1: the element-wise ops of RL-sized nets are too small to split, and one libgomp
 *       thread cannot spin against OpenBLAS;</li>
 *   <li>inter-op threads = 1: a learner runs one graph at a time;</li>
 *   <li>OpenBLAS threads = 1: a second thread makes a large net's products 1.5x faster when the cores are free,
 *       but when another process holds one of them (a collector, a second rank, a neighbour) the DQN update's p99
 *       went from 0.5 ms to 28.6 ms (fused) and from 2.2 ms to 98.6 ms (libtorch) on this 2-core machine
 *       ({@code DqnUpdateBenchmark -p blas=1,2} beside a busy loop): the default must not collapse under
 *       contention. A job that owns its cores can raise it with {@value #BLAS_PROPERTY}.</li>
 * </ul>
 * Each can be overridden with a system property: {@value #INTRA_OP_PROPERTY}, {@value #INTER_OP_PROPERTY},
 * {@value #BLAS_PROPERTY}. Environment variables of these libraries must be set before the JVM starts; the
 * {@code ./ding4j} launcher sets {@code OMP_WAIT_POLICY=PASSIVE}.
 * <p>
 * Every Java thread ding4j starts (a learner's data loader and its workers, its log reporter and TensorBoard writer,
 * the background native load, parallel mode's collector, a threaded vector env's workers) comes from one
 * {@link #threadFactory(ThreadFactory)} the embedding application may set, so that it can name, pin or account for
 * them; the default makes daemon threads named {@code ding4j-<role>}.
 * <p>
 * Thread-safe; {@link #configure()} is idempotent and returns the settings in force.
 */
public final class Threads
{
    /** System property: libtorch intra-op threads. */
    public static final String INTRA_OP_PROPERTY = "ding4j.threads.intraOp";
    /** System property: libtorch inter-op threads. */
    public static final String INTER_OP_PROPERTY = "ding4j.threads.interOp";
    /** System property: OpenBLAS threads. */
    public static final String BLAS_PROPERTY = "ding4j.threads.blas";
    /** The default OpenBLAS thread count (see the rule above). */
    public static final int DEFAULT_BLAS_THREADS = 1;

    private static Settings applied;
    /** Whether libtorch's inter-op count was set: libtorch takes it once per process and throws on a second call. */
    private static boolean interOpSet;
    /** Null: the default, named daemon threads. */
    private static volatile ThreadFactory factory;

    private Threads()
    {
    }

    /**
     * Sets where every thread ding4j starts from now on comes from (threads already running stay); null restores
     * the default (daemon threads named {@code ding4j-<role>}). A thread of the application's factory keeps the
     * name and daemon flag the factory gives it.
     *
     * @param threads the application's factory, or null
     */
    public static void threadFactory(final ThreadFactory threads)
    {
        factory = threads;
    }

    /**
     * A new, unstarted thread for ding4j's work, from the application's factory when one is set.
     *
     * @param task what it runs
     * @param role its role, named {@code ding4j-<role>} by the default factory
     * @return the thread
     */
    public static Thread newThread(final Runnable task, final String role)
    {
        final ThreadFactory threads = factory;
        if (null != threads)
        {
            return java.util.Objects.requireNonNull(threads.newThread(task), "the thread factory returned null");
        }
        final Thread thread = new Thread(task, "ding4j-" + role);
        thread.setDaemon(true);
        return thread;
    }

    /**
     * Waits until a thread has ended, whatever interrupts the waiting one: what the thread uses is freed next, so a
     * wait cut short would free it under the thread. An interrupt that came meanwhile is set again on return.
     *
     * @param thread the thread (one never started returns at once)
     */
    public static void joinUninterruptibly(final Thread thread)
    {
        boolean interrupted = false;
        while (thread.isAlive())
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Checks the thread count of a fused update ({@code policy.learn.update_threads}): 1, or 2 with a native helper
     * thread of the update's own; the policies check it when it is set, the fused updates when it is applied.
     *
     * @param name    what the count is, named in the message
     * @param threads the count
     * @throws IllegalArgumentException naming it unless it is 1 or 2
     */
    public static void checkUpdateThreads(final String name, final int threads)
    {
        if (1 != threads && 2 != threads)
        {
            throw new IllegalArgumentException(name + ": expected 1 or 2, got " + threads);
        }
    }

    /**
     * Thread counts in force.
     *
     * @param intraOp libtorch intra-op threads
     * @param interOp libtorch inter-op threads, or 0 when libtorch had already started its inter-op pool
     * @param blas    OpenBLAS threads
     */
    public record Settings(int intraOp, int interOp, int blas)
    {
    }

    /**
     * Applies the defaults (or the system-property overrides) once.
     *
     * @return the settings in force
     * @throws IllegalArgumentException if a property is not a positive integer
     */
    public static synchronized Settings configure()
    {
        Natives.load();
        if (null == applied)
        {
            apply(
                positive(INTRA_OP_PROPERTY, 1),
                positive(INTER_OP_PROPERTY, 1),
                positive(BLAS_PROPERTY, DEFAULT_BLAS_THREADS));
        }
        return applied;
    }

    /**
     * Sets explicit thread counts: an application's own (a pipeline's run then keeps them), benchmarks and tests that
     * compare settings.
     *
     * @param intraOp libtorch intra-op threads, positive
     * @param interOp libtorch inter-op threads, positive; ignored once libtorch's inter-op pool has started
     * @param blas    OpenBLAS threads, positive
     * @return the settings in force
     * @throws IllegalArgumentException if a count is not positive
     */
    public static synchronized Settings configure(final int intraOp, final int interOp, final int blas)
    {
        check("intraOp", intraOp);
        check("interOp", interOp);
        check("blas", blas);
        Natives.load();
        apply(intraOp, interOp, blas);
        return applied;
    }

    private static void apply(final int intraOp, final int interOp, final int blas)
    {
        torch.set_num_threads(intraOp);
        // libtorch allows this call once, before its inter-op pool starts; later calls keep whatever is in force,
        // which does not affect a learner that runs one graph at a time. A second call is not made at all: its C++
        // exception aborts a JVM whose C++ exceptions AddressSanitizer intercepts (the sanitizer build's tests).
        int interOpInForce = null == applied ? 0 : applied.interOp();
        if (!interOpSet)
        {
            interOpSet = true;
            try
            {
                torch.set_num_interop_threads(interOp);
                interOpInForce = interOp;
            }
            catch (final RuntimeException ex)
            {
                // The application's own libtorch work started the pool first.
                interOpInForce = 0;
            }
        }
        openblas_nolapack.blas_set_num_threads(blas);
        applied = new Settings(torch.get_num_threads(), interOpInForce, openblas_nolapack.blas_get_num_threads());
    }

    private static int positive(final String property, final int fallback)
    {
        final String value = System.getProperty(property);
        if (null == value || value.isBlank())
        {
            return fallback;
        }
        final int parsed;
        try
        {
            parsed = Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(property + ": expected a positive integer, got \"" + value + "\"", ex);
        }
        check(property, parsed);
        return parsed;
    }

    private static void check(final String name, final int value)
    {
        if (value < 1)
        {
            throw new IllegalArgumentException(name + ": expected a positive integer, got " + value);
        }
    }
}
