package org.ding4j.dist;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.AllreduceOptions;
import org.bytedeco.pytorch.Backend;
import org.bytedeco.pytorch.BackendOptional;
import org.bytedeco.pytorch.BroadcastOptions;
import org.bytedeco.pytorch.GlooDeviceVector;
import org.bytedeco.pytorch.PrefixStore;
import org.bytedeco.pytorch.ProcessGroup;
import org.bytedeco.pytorch.ProcessGroupGloo;
import org.bytedeco.pytorch.ReduceOp;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.Work;
import org.bytedeco.pytorch.global.torch;
import org.bytedeco.pytorch.gloo.Device;
import org.bytedeco.pytorch.nccl.ProcessGroupNCCL;
import org.ding4j.jfr.AllReduceEvent;
import org.ding4j.jfr.Jfr;

/**
 * One c10d process group through libtorch, in three parts: the rendezvous ({@link Rendezvous}: the {@code TCPStore}
 * at {@code MASTER_ADDR:MASTER_PORT}, rank 0's or torchrun's agent's, and the job check), the collectives and their
 * waits (here: {@code ProcessGroupGloo} for CPU tensors and, on the first collective of a CUDA tensor,
 * {@code ProcessGroupNCCL} on the same store under the prefix {@code nccl/}, as PyTorch's
 * {@code backend="cpu:gloo,cuda:nccl"} does, see {@link #backendFor}; the c10d {@code ProcessGroup} that
 * {@link DataParallel}'s Reducer takes), and the direct exchange ({@link Exchange}: CPU tensors of 2 ranks, and small
 * ones of up to 4, summed by Gloo's point-to-point send and receive, one round trip instead of about 2.5). The fused
 * path ({@link GradientSync}) and the Reducer path share all three. The NCCL natives come with the {@code gpu} build
 * (the {@code -gpu} classifiers); the CPU build fails that first CUDA collective with a message saying so. Every
 * collective is waited for with the group's timeout, so a rank that dies or hangs makes the others fail within it
 * with a {@link DistException} naming the operation, never an endless wait.
 * <p>
 * The store, the Gloo device and options, and the backend are held here (strong references: the native objects
 * must outlive every collective) and released in reverse order by {@link #close()}. Not thread-safe: collectives
 * must be issued in the same order on every rank, so one thread (the training thread) owns the group.
 */
public final class DistGroup implements AutoCloseable
{
    /** A source line that opens a native message: {@code [/path/file.cc:123] }. */
    private static final java.util.regex.Pattern SOURCE_LINE = java.util.regex.Pattern.compile(
        "^\\[[^\\]\\s]+\\.(?:cc|cpp|cxx|h|hpp|cu):\\d+\\]\\s*");

    /** Gloo's CPU backend, the only one in the default build. */
    public static final String GLOO = "gloo";
    /**
     * Gloo's worker threads: each runs one collective at a time, so this many gradient buckets can be in flight at
     * once, their round trips overlapping (measured: a 5-bucket 1M-parameter net at 5 ms each way takes 89 / 62 /
     * 56 ms per update with 2 / 4 / 8 threads; benchmarks/README.md). A thread waiting on its socket costs no CPU.
     */
    static final int GLOO_THREADS = 8;
    /**
     * Names the largest tensor, in bytes, that 3 or 4 ranks sum by {@link #exchange} rather than the all-reduce
     * (2 ranks exchange every CPU tensor); 0 turns the exchange off.
     */
    public static final String EXCHANGE_MAX_BYTES_PROPERTY = "ding4j.dist.exchangeMaxBytes";
    /** {@value #EXCHANGE_MAX_BYTES_PROPERTY}, 256 KiB by default (measured: benchmarks/README.md, "Scaling out"). */
    static final long EXCHANGE_MAX_BYTES = Long.getLong(EXCHANGE_MAX_BYTES_PROPERTY, 256 * 1024);
    /** Beyond this many ranks every rank would send too many copies: the all-reduce then. */
    static final int EXCHANGE_MAX_WORLD = 4;
    /** Names the switch for {@link #exchange}'s early receives ({@code false}: posted with the sends, to measure). */
    public static final String POST_AHEAD_PROPERTY = "ding4j.dist.postAhead";
    /** {@value #POST_AHEAD_PROPERTY}, on by default. */
    static final boolean POST_AHEAD = !"false".equalsIgnoreCase(System.getProperty(POST_AHEAD_PROPERTY));
    /** The first {@link Exchange} tag; each exchange has one of its own ({@link #exchange}). */
    static final int EXCHANGE_TAGS = 16;
    /** NCCL, for CUDA tensors (the {@code gpu} build). */
    public static final String NCCL = "nccl";

    private final DistInfo info;
    private final Duration timeout;
    /** The store the ranks met on and what it tells them (the job check, a peer's reported failure). */
    private final Rendezvous rendezvous;
    private final Device device;
    private final GlooDeviceVector devices;
    private final ProcessGroupGloo.Options options;
    private final ProcessGroupGloo gloo;
    /** Made on the first CUDA collective (the same one on every rank), with the store prefix it needs. */
    private PrefixStore ncclStore;
    private ProcessGroupNCCL nccl;
    private final AllreduceOptions sum;
    private final TensorVector one = new TensorVector(1);
    /** The c10d ProcessGroup over the Gloo backend, made for the first Reducer ({@link #processGroup}). */
    private ProcessGroup processGroup;
    /** Read by exchanges closing on any thread. */
    private volatile boolean closed;
    /** The next fresh tag for {@link #exchange}; every rank makes its exchanges in the same order. */
    private int nextExchangeTag = EXCHANGE_TAGS;
    /** Closed exchanges whose posted receives Gloo may still fill: released with the group, after Gloo shuts down. */
    private final List<Exchange> parked = Collections.synchronizedList(new ArrayList<>());

    private DistGroup(final DistInfo info, final Duration timeout, final String settings)
    {
        this.info = info;
        this.timeout = timeout;
        final Milliseconds millis = new Milliseconds(timeout.toMillis());
        rendezvous = new Rendezvous(info, timeout, settings);
        device = glooDevice(info);
        devices = new GlooDeviceVector(device);
        options = new ProcessGroupGloo.Options(millis);
        options.devices(devices);
        options.threads(GLOO_THREADS);
        try
        {
            gloo = new ProcessGroupGloo(rendezvous.store(), info.rank(), info.worldSize(), options);
        }
        catch (final RuntimeException ex)
        {
            throw new DistException("init_process_group", info, reason(ex) + " (within " + timeout.toMillis()
                + " ms)", ex);
        }
        sum = new AllreduceOptions();
        sum.reduceOp(new ReduceOp(ReduceOp.RedOpType.SUM));
        sum.timeout(millis);
    }

    /**
     * Joins the group: every rank must call this with the same world size, master address and port.
     *
     * @param info    this process's place
     * @param timeout rendezvous and collective timeout (> 0)
     * @return the group
     * @throws DistException if the rendezvous fails or times out, or the calling thread is interrupted while it waits
     *                       for a peer or the store (its interrupt status stays set)
     */
    public static DistGroup join(final DistInfo info, final Duration timeout)
    {
        return join(info, timeout, "");
    }

    /**
     * As {@link #join(DistInfo, Duration)}, checking at the rendezvous that every rank has the same settings.
     *
     * @param info     this process's place
     * @param timeout  rendezvous and collective timeout (> 0)
     * @param settings what every rank must share, one setting per line (e.g. the effective config's
     *                 {@code Config.settingLines()}); "" for nothing but the job and world size
     * @return the group
     * @throws DistException if the rendezvous fails or times out, a rank's settings differ (naming the line), or the
     *                       calling thread is interrupted while it waits for a peer or the store
     */
    public static DistGroup join(final DistInfo info, final Duration timeout, final String settings)
    {
        Objects.requireNonNull(info, "info");
        Objects.requireNonNull(settings, "settings");
        if (null == timeout || timeout.isNegative() || timeout.isZero())
        {
            throw new IllegalArgumentException("timeout: expected > 0, got " + timeout);
        }
        return new DistGroup(info, timeout, settings);
    }

    /**
     * The backend c10d uses for a tensor's device, as PyTorch's {@code init_process_group(backend="cpu:gloo,
     * cuda:nccl")} does.
     *
     * @param tensor the tensor to be reduced
     * @return {@link #GLOO} for CPU tensors, {@link #NCCL} for CUDA tensors
     */
    public static String backendFor(final Tensor tensor)
    {
        return tensor.is_cuda() ? NCCL : GLOO;
    }

    private static Device glooDevice(final DistInfo info)
    {
        final String iface = System.getenv("GLOO_SOCKET_IFNAME");
        if (null != iface && !iface.isBlank())
        {
            return ProcessGroupGloo.createDeviceForInterface(iface.trim());
        }
        final String master = info.masterAddr();
        if ("127.0.0.1".equals(master) || "localhost".equals(master))
        {
            return ProcessGroupGloo.createDeviceForHostname("127.0.0.1");
        }
        return ProcessGroupGloo.createDefaultDevice();
    }

    /**
     * @return the c10d ProcessGroup with this group's Gloo backend for CPU tensors (what a Reducer takes). Made with
     *     the presets' (rank, size) constructor: their (store, rank, size) one aborts the process (libtorch 2.10's
     *     constructor takes a reference to itself before the presets' intrusive_ptr adopts it: "Newly-created target
     *     had non-zero refcounts"); the store lives in the Gloo backend anyway.
     */
    synchronized ProcessGroup processGroup()
    {
        if (null == processGroup)
        {
            processGroup = new ProcessGroup(info.rank(), info.worldSize());
            // The optional holds a reference of its own: released at once, so that only the group's keeps Gloo.
            try (BackendOptional backend = new BackendOptional(gloo))
            {
                processGroup.setBackend(torch.DeviceType.CPU, ProcessGroup.BackendType.GLOO, backend);
            }
            processGroup.setDefaultBackend(ProcessGroup.BackendType.GLOO);
        }
        return processGroup;
    }

    /** @return the Gloo backend, for {@link Exchange}'s point-to-point messages */
    ProcessGroupGloo gloo()
    {
        return gloo;
    }

    /** @return whether {@link #close()} ran */
    boolean isClosed()
    {
        return closed;
    }

    /** Keeps a closed exchange whose receives Gloo may still fill until the group closes (after Gloo shuts down). */
    void park(final Exchange exchange)
    {
        parked.add(exchange);
    }

    /** @return this process's place */
    public DistInfo info()
    {
        return info;
    }

    /** @return the collective timeout */
    public Duration timeout()
    {
        return timeout;
    }

    /**
     * Sums a tensor over all ranks in place; one JFR {@link AllReduceEvent} when recorded.
     *
     * @param tensor    contiguous, on the device of this group's backend
     * @param operation what it is for, named in errors (e.g. "allreduce gradients")
     * @throws DistException if a rank fails or the timeout passes
     */
    public void allReduceSum(final Tensor tensor, final String operation)
    {
        if (Jfr.allReduces())
        {
            final AllReduceEvent event = new AllReduceEvent();
            event.begin();
            allReduce(tensor, operation);
            commit(event, operation, tensor.nbytes());
        }
        else
        {
            allReduce(tensor, operation);
        }
    }

    /**
     * Ends an all-reduce's JFR event, begun when the collective started, and commits it with this group's place.
     *
     * @param event     the begun event
     * @param operation what it was for
     * @param bytes     the bytes reduced
     */
    void commit(final AllReduceEvent event, final String operation, final long bytes)
    {
        event.end();
        if (event.shouldCommit())
        {
            event.purpose = operation;
            event.bytes = bytes;
            event.rank = info.rank();
            event.worldSize = info.worldSize();
            event.commit();
        }
    }

    private void allReduce(final Tensor tensor, final String operation)
    {
        final Backend backend = backend(tensor, operation);
        one.put(0, tensor);
        final Work work;
        try
        {
            work = backend.allreduce(one, sum);
        }
        catch (final RuntimeException ex)
        {
            throw failure(operation, reason(ex), ex);
        }
        await(work, operation);
    }

    /**
     * Starts summing tensors over all ranks in place without waiting ({@link #await}): Gloo's one worker thread
     * runs the collectives in the order they were started, the same on every rank, while the caller goes on.
     *
     * @param tensors   one contiguous CPU tensor, held by the caller until {@link #await}
     * @param operation what it is for, named in errors
     * @return the work to finish
     * @throws DistException if the collective cannot be started
     */
    Work startAllReduceSum(final TensorVector tensors, final String operation)
    {
        final Backend backend = backend(tensors.get(0), operation);
        try
        {
            return backend.allreduce(tensors, sum);
        }
        catch (final RuntimeException ex)
        {
            throw failure(operation, reason(ex), ex);
        }
    }

    /**
     * Prepares summing one tensor over the ranks by direct exchange instead of Gloo's all-reduce: every rank sends
     * its values to every other and adds what it receives, in rank order, so every rank ends with the same bits.
     * Gloo's ring all-reduce takes about 2.5 round trips for a small message (its protocol's handshakes); the
     * exchange about one, at the cost of sending the whole tensor to each peer, so it is for 2 ranks, or small tensors
     * and few ranks ({@link #exchanges}). It also keeps the receives of its next two sums posted, under a tag of its
     * own: a Gloo peer sends a message once the receiver has announced its buffer, a one-way trip away, so announced a
     * sum ahead, a sum costs one one-way trip plus the transfer instead of two (benchmarks/README.md, "Scaling out";
     * {@value #POST_AHEAD_PROPERTY}{@code =false} posts them with the sends, to measure). For a tensor of one length
     * summed over and over: the gradient buckets, the log values, the separate vote. Every rank must make its
     * exchanges in the same order (the tags are counted) and use each in the same order. Closed while a receive is
     * posted, its buffers stay with the group until the group closes, so a late message never lands in freed memory.
     *
     * @param tensor contiguous CPU tensor, kept by the caller while the exchange is used
     * @return the exchange; close it before the group
     */
    Exchange exchange(final Tensor tensor)
    {
        checkOpen("exchange");
        return new Exchange(this, tensor, nextExchangeTag++, POST_AHEAD);
    }

    /**
     * Whether summing a tensor by {@link #exchange} beats the all-reduce (measured at 0 and 1 ms each way,
     * benchmarks/README.md): with 2 ranks always (each rank sends the whole tensor once, as many bytes as the ring's
     * two half steps, with one handshake instead of several), with 3 or 4 up to {@link #EXCHANGE_MAX_BYTES} (every
     * rank sends N - 1 copies, the ring under 2), beyond that never; not for NCCL, whose all-reduce is another matter.
     *
     * @param bytes a CPU tensor's size
     * @return whether to exchange it
     */
    boolean exchanges(final long bytes)
    {
        final int world = info.worldSize();
        return EXCHANGE_MAX_BYTES > 0 && (2 == world || world <= EXCHANGE_MAX_WORLD && bytes <= EXCHANGE_MAX_BYTES);
    }

    /**
     * Copies rank {@code root}'s tensor into every rank's, in place.
     *
     * @param tensor    contiguous, same shape on every rank
     * @param root      the source rank
     * @param operation what it is for, named in errors
     * @throws DistException if a rank fails or the timeout passes
     */
    public void broadcast(final Tensor tensor, final int root, final String operation)
    {
        final Backend backend = backend(tensor, operation);
        one.put(0, tensor);
        final Work work;
        try (BroadcastOptions options = new BroadcastOptions())
        {
            options.rootRank(root);
            options.timeout(new Milliseconds(timeout.toMillis()));
            work = backend.broadcast(one, options);
        }
        catch (final RuntimeException ex)
        {
            throw failure(operation, reason(ex), ex);
        }
        await(work, operation);
    }

    /**
     * Waits until every rank has arrived.
     *
     * @param operation what it is for, named in errors
     * @throws DistException if a rank fails or the timeout passes
     */
    public void barrier(final String operation)
    {
        checkOpen(operation);
        final Work work;
        try
        {
            work = gloo.barrier();
        }
        catch (final RuntimeException ex)
        {
            throw failure(operation, reason(ex), ex);
        }
        await(work, operation);
    }

    /**
     * Waits for a started collective within the group's timeout, and frees it.
     *
     * @param work      what a collective returned
     * @param operation what it is for, named in errors
     * @throws DistException if a rank fails or the timeout passes
     */
    void await(final Work work, final String operation)
    {
        try (work)
        {
            if (!work._wait(new Milliseconds(timeout.toMillis())))
            {
                // Our own clock ran out: a hung peer, so nothing to ask the store (see failure).
                throw new DistException(operation, info, "not completed within " + timeout.toMillis() + " ms", null);
            }
        }
        catch (final DistException ex)
        {
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            throw failure(operation, reason(ex), ex);
        }
    }

    private Backend backend(final Tensor tensor, final String operation)
    {
        checkOpen(operation);
        if (!tensor.is_contiguous())
        {
            throw new IllegalArgumentException(operation + ": expected a contiguous tensor");
        }
        if (GLOO.equals(backendFor(tensor)))
        {
            return gloo;
        }
        if (null == nccl)
        {
            try
            {
                ncclStore = new PrefixStore("nccl/", rendezvous.store());
                final ProcessGroupNCCL.Options ncclOptions = new ProcessGroupNCCL.Options();
                ncclOptions.timeout(new Milliseconds(timeout.toMillis()));
                nccl = new ProcessGroupNCCL(ncclStore, info.rank(), info.worldSize(), ncclOptions);
            }
            catch (final UnsatisfiedLinkError | NoClassDefFoundError ex)
            {
                throw new DistException(operation, info, "a CUDA tensor needs NCCL, which this build lacks "
                    + "(build with -Pgpu for the CUDA natives)", ex);
            }
            catch (final RuntimeException ex)
            {
                throw new DistException(operation + " (NCCL init)", info, reason(ex), ex);
            }
        }
        return nccl;
    }

    /**
     * Tells the other ranks why this one is about to leave (best effort, before {@link #close()}): their next
     * collective then fails with this message beside their own error, instead of only "connection closed".
     *
     * @param message the cause, e.g. the exception's {@code toString()}
     */
    public void reportFailure(final String message)
    {
        if (closed)
        {
            return;
        }
        rendezvous.reportFailure(message);
    }

    /**
     * A collective's failure, with what a peer reported through {@link #reportFailure} if it did. Not asked after a
     * timeout: a hung peer may be the store's host, and asking would wait out the store's timeout as well.
     */
    DistException failure(final String operation, final String detail, final Throwable cause)
    {
        final String lower = String.valueOf(detail).toLowerCase(Locale.ROOT);
        if (lower.contains("timed out") || lower.contains("timeout"))
        {
            return new DistException(operation, info, detail, cause);
        }
        final String reported = rendezvous.reportedFailure();
        return new DistException(operation, info, null == reported ? detail : detail + " (failed first: " + reported
            + ")", cause);
    }

    /**
     * A native error's message without the C++ backtrace that c10 appends ("Exception raised from ... frame #0
     * ..."), on one line: the first line of a failed job's log should say what broke, not list frames. The
     * exception itself stays the cause, backtrace and all.
     */
    static String reason(final RuntimeException ex)
    {
        final String message = String.valueOf(ex.getMessage());
        final int backtrace = message.indexOf("Exception raised from ");
        // Gloo's messages open with the source line in the presets' build tree ("[/home/runner/.../pair.cc:538] Read
        // error ..."): a path on another machine, of no use to the reader.
        final String text = (backtrace < 0 ? message : message.substring(0, backtrace)).strip();
        return SOURCE_LINE.matcher(text).replaceFirst("").replaceAll("\\s*\n\\s*", " ");
    }

    void checkOpen(final String operation)
    {
        if (closed)
        {
            throw new IllegalStateException(operation + ": the process group is closed");
        }
    }

    private static void shutdownQuietly(final Backend backend)
    {
        try
        {
            backend.shutdown();
        }
        catch (final RuntimeException ignored)
        {
            // A peer already gone makes shutdown complain; the resources are freed regardless.
        }
    }

    /** Shuts the backend down and releases the native objects (idempotent). */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        shutdownQuietly(gloo);
        if (null != processGroup)
        {
            // It holds a reference to the Gloo backend: released first, so that gloo.close() frees the backend.
            processGroup.close();
        }
        if (null != nccl)
        {
            shutdownQuietly(nccl);
            nccl.close();
            ncclStore.close();
        }
        one.close();
        sum.close();
        synchronized (parked)
        {
            for (final Exchange exchange : parked)
            {
                exchange.dropReceives();
            }
            gloo.close();
            for (final Exchange exchange : parked)
            {
                exchange.freeBuffers();
            }
            parked.clear();
        }
        options.close();
        devices.close();
        device.close();
        rendezvous.close();
    }
}
