package org.ding4j.dist;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.AllreduceOptions;
import org.bytedeco.pytorch.Backend;
import org.bytedeco.pytorch.BackendOptional;
import org.bytedeco.pytorch.ByteVector;
import org.bytedeco.pytorch.BroadcastOptions;
import org.bytedeco.pytorch.GlooDeviceVector;
import org.bytedeco.pytorch.PrefixStore;
import org.bytedeco.pytorch.ProcessGroup;
import org.bytedeco.pytorch.Store;
import org.bytedeco.pytorch.ProcessGroupGloo;
import org.bytedeco.pytorch.ReduceOp;
import org.bytedeco.pytorch.StringVector;
import org.bytedeco.pytorch.TCPStore;
import org.bytedeco.pytorch.TCPStoreOptions;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.Work;
import org.bytedeco.pytorch.global.torch;
import org.bytedeco.pytorch.gloo.Device;
import org.bytedeco.pytorch.nccl.ProcessGroupNCCL;
import org.ding4j.jfr.AllReduceEvent;
import org.ding4j.torch.NativeOwner;

/**
 * One c10d process group through libtorch: rendezvous on a {@code TCPStore} that rank 0 hosts at
 * {@code MASTER_ADDR:MASTER_PORT} (under torchrun's static rendezvous, {@code TORCHELASTIC_USE_AGENT_STORE=True},
 * the one its agent hosts there, under its prefix per attempt), then {@code ProcessGroupGloo} for CPU tensors and, on the first collective of
 * a CUDA tensor, {@code ProcessGroupNCCL} on the same store (under the prefix {@code nccl/}) for CUDA tensors, as
 * PyTorch's {@code backend="cpu:gloo,cuda:nccl"} does (see {@link #backendFor}). The NCCL natives come with the
 * {@code gpu} build (the {@code -gpu} classifiers); the CPU build fails that first CUDA collective with a message
 * saying so. CPU tensors of 2 ranks (and small ones of up to 4) are summed by direct exchange instead of Gloo's
 * all-reduce ({@link #exchange}: Gloo's point-to-point send and receive, one round trip instead of about 2.5).
 * Every collective is waited for with the group's timeout, so a rank that dies or hangs makes the others fail within
 * it with a {@link DistException} naming the operation, never an endless wait.
 * <p>
 * The store, the Gloo device and options, and the backend are held here (strong references: the native objects
 * must outlive every collective) and released in reverse order by {@link #close()}. Not thread-safe: collectives
 * must be issued in the same order on every rank, so one thread (the training thread) owns the group.
 */
public final class DistGroup implements AutoCloseable
{
    /** Gloo's CPU backend, the only one in the default build. */
    public static final String GLOO = "gloo";
    /** Asked only whether the event type is on: never committed, so one instance serves every group. */
    private static final AllReduceEvent ALL_REDUCE_PROBE = new AllReduceEvent();
    /** The store key under which a failing rank leaves its cause for the others. */
    private static final String FAILURE_KEY = "ding4j/failure";
    /** Where rank 0 writes the job's identity for the others to check. */
    private static final String JOB_KEY = "ding4j/job";
    /** Set by a rank once it has read rank 0's identity, so that rank 0 (the store's host) knows it may exit. */
    private static final String READ_SUFFIX = "/read";
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
    /** The connection to the store (hosted by rank 0, or by torchrun's agent). */
    private final TCPStore tcp;
    /** What the ranks rendezvous on: the store itself, or torchrun's prefix of it. */
    private final Store store;
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
        final TCPStoreOptions storeOptions = new TCPStoreOptions()
            .port((short)info.masterPort())
            .isServer(0 == info.rank() && !info.usesAgentStore())
            .waitWorkers(false)
            .timeout(millis);
        try
        {
            tcp = new TCPStore(info.masterAddr(), storeOptions);
            store = info.usesAgentStore() ? new PrefixStore(info.agentStore(), tcp) : tcp;
        }
        catch (final RuntimeException ex)
        {
            final String reason = reason(ex);
            throw new DistException("rendezvous", info, "TCPStore at " + info.masterAddr() + ":" + info.masterPort()
                + (reason.toLowerCase(Locale.ROOT).contains("address already in use")
                ? " cannot be hosted: the port is in use (another job? give each job its own --master-port): "
                : " failed within " + timeout.toMillis() + " ms: ") + reason, ex);
        }
        try
        {
            checkJob(settings);
        }
        catch (final RuntimeException ex)
        {
            closeStore();
            throw ex;
        }
        device = glooDevice(info);
        devices = new GlooDeviceVector(device);
        options = new ProcessGroupGloo.Options(millis);
        options.devices(devices);
        options.threads(GLOO_THREADS);
        try
        {
            gloo = new ProcessGroupGloo(store, info.rank(), info.worldSize(), options);
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
     * Every rank checks that it joins its own job with the same world size and settings before any collective: two
     * jobs on one port would otherwise pair their ranks and average each other's gradients, and ranks of one job
     * started with different configs would train on, each with its own. Rank 0 writes its identity and settings
     * into its store and reads every other rank's (under keys of this job's id, so a rank of another job overwrites
     * nothing); each other rank writes its own and reads rank 0's. A mismatch fails both sides at once, naming the
     * first setting that differs.
     */
    private void checkJob(final String settings)
    {
        // Line 0 the job, line 1 the world size, then the settings: compare() names the first line that differs.
        final String mine = info.jobId() + "\nworld size " + info.worldSize() + "\n" + settings;
        if (0 == info.rank())
        {
            store.set(JOB_KEY, mine);
            for (int r = 1; r < info.worldSize(); r++)
            {
                final String key = JOB_KEY + "/" + info.jobId() + "/rank" + r;
                final String theirs = read(key, "rank " + r + " did not join");
                try
                {
                    compare(theirs, mine, "rank " + r);
                }
                catch (final DistException mismatch)
                {
                    // Rank r fails on the same comparison once it has read this rank's identity; this process hosts
                    // the store, so it stays until then (a few seconds at most), or rank r would only see the
                    // connection close.
                    awaitQuietly(key + READ_SUFFIX, Duration.ofSeconds(Math.min(10, timeout.toSeconds())));
                    throw mismatch;
                }
            }
            return;
        }
        final String key = JOB_KEY + "/" + info.jobId() + "/rank" + info.rank();
        store.set(key, mine);
        final String theirs = read(JOB_KEY, "the store did not say which job it serves");
        store.set(key + READ_SUFFIX, "1");
        compare(theirs, mine, "rank 0");
    }

    /** Waits for a store key, for at most {@code limit}; a key that does not come (a rank died) ends the wait. */
    private void awaitQuietly(final String key, final Duration limit)
    {
        try (StringVector keys = new StringVector(key); Milliseconds millis = new Milliseconds(limit.toMillis()))
        {
            store._wait(keys, millis);
        }
        catch (final RuntimeException timedOut)
        {
            // The peer is gone or slow: the mismatch is reported regardless.
        }
    }

    private String read(final String key, final String missing)
    {
        try (ByteVector value = store.get(key))
        {
            return new String(value.get(), StandardCharsets.UTF_8);
        }
        catch (final RuntimeException ex)
        {
            throw new DistException("rendezvous", info, missing + " at " + info.masterAddr() + ":"
                + info.masterPort() + " within " + timeout.toMillis() + " ms: " + reason(ex), ex);
        }
    }

    private void compare(final String theirs, final String mine, final String who)
    {
        final String[] a = mine.split("\n", -1);
        final String[] b = theirs.split("\n", -1);
        if (!a[0].equals(b[0]))
        {
            throw new DistException("rendezvous", info, "the store at " + info.masterAddr() + ":"
                + info.masterPort() + " serves job " + b[0] + ", not this job " + a[0]
                + ": another job uses this port", null);
        }
        if (b.length < 2 || !a[1].equals(b[1]))
        {
            throw new DistException("rendezvous", info, who + " was started with " + (b.length < 2 ? "no world size"
                : b[1]) + ", this rank with " + a[1] + ": every rank needs the same world size", null);
        }
        for (int i = 2; i < Math.max(a.length, b.length); i++)
        {
            final String here = i < a.length ? a[i] : "(missing)";
            final String there = i < b.length ? b[i] : "(missing)";
            if (!here.equals(there))
            {
                throw new DistException("rendezvous", info, who + " runs another config: " + there + " on " + who
                    + ", " + here + " here (config sha256 " + sha256(theirs) + " vs " + sha256(mine)
                    + "); every rank must run the same effective config", null);
            }
        }
    }

    private static String sha256(final String text)
    {
        try
        {
            final byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("every JVM has SHA-256", ex);
        }
    }

    /**
     * Joins the group: every rank must call this with the same world size, master address and port.
     *
     * @param info    this process's place
     * @param timeout rendezvous and collective timeout (> 0)
     * @return the group
     * @throws DistException if the rendezvous fails or times out
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
     * @throws DistException if the rendezvous fails or times out, or a rank's settings differ (naming the line)
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
            processGroup.setBackend(torch.DeviceType.CPU, ProcessGroup.BackendType.GLOO, new BackendOptional(gloo));
            processGroup.setDefaultBackend(ProcessGroup.BackendType.GLOO);
        }
        return processGroup;
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
        if (ALL_REDUCE_PROBE.isEnabled())
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
        return new Exchange(tensor, nextExchangeTag++, POST_AHEAD);
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
     * One tensor's sum by direct exchange: post with {@link #start}, then {@link #finish}. Training thread only. It
     * keeps the receives of the next two sums posted (two buffers per peer, used in turn), so that each peer knows
     * where the next message goes before it is sent.
     */
    final class Exchange implements AutoCloseable
    {
        private final Tensor tensor;
        private final TensorVector own;
        /** The peers' values, by buffer and rank (this rank's slot empty): one buffer, or two in turn when ahead. */
        private final Tensor[][] received;
        private final TensorVector[][] receiving;
        private final Work[][] receives;
        private final Work[] sends;
        /** Whether buffer b's receives are posted. */
        private final boolean[] posted;
        /** The ordered sum for more than two ranks; null for two (a + b is b + a). */
        private final Tensor ordered;
        private final int tag;
        /** The sums done; sum k uses buffer k % buffers. */
        private long round;
        /** Set by a failure: the messages of this tag may be out of step, so no further sum is made with it. */
        private boolean broken;
        /** Between a start and its finish. */
        private boolean inFlight;
        /** Owns the buffers: a caller's scope open while they are made (the first update's) must not free them. */
        private final NativeOwner natives = new NativeOwner("exchange");

        private Exchange(final Tensor tensor, final int tag, final boolean ahead)
        {
            if (!tensor.is_contiguous() || !GLOO.equals(backendFor(tensor)))
            {
                throw new IllegalArgumentException("exchange: expected a contiguous CPU tensor");
            }
            this.tensor = tensor;
            this.tag = tag;
            final int world = info.worldSize();
            final int buffers = ahead ? 2 : 1;
            own = natives.own(new TensorVector(tensor));
            received = new Tensor[buffers][world];
            receiving = new TensorVector[buffers][world];
            receives = new Work[buffers][world];
            posted = new boolean[buffers];
            for (int b = 0; b < buffers; b++)
            {
                for (int r = 0; r < world; r++)
                {
                    if (r != info.rank())
                    {
                        received[b][r] = natives.own(torch.empty_like(tensor));
                        receiving[b][r] = natives.own(new TensorVector(received[b][r]));
                    }
                }
            }
            sends = new Work[world];
            ordered = world > 2 ? natives.own(torch.empty_like(tensor)) : null;
        }

        private void post(final int buffer, final String operation)
        {
            if (posted[buffer])
            {
                return;
            }
            try
            {
                for (int r = 0; r < info.worldSize(); r++)
                {
                    if (r != info.rank())
                    {
                        // Held past the caller's pointer scope (an ahead receive is posted in one update and waited
                        // for in the next): released once waited for.
                        receives[buffer][r] = gloo.recv(receiving[buffer][r], r, tag).retainReference();
                    }
                }
            }
            catch (final RuntimeException ex)
            {
                // What was posted before the failure is not counted in posted[]: broken keeps it outstanding.
                broken = true;
                throw failure(operation, reason(ex), ex);
            }
            posted[buffer] = true;
        }

        /**
         * @return whether Gloo may still write into a receive buffer: receives are posted, or a failure left some in
         *         an unknown state
         */
        private boolean outstanding()
        {
            return broken || posted[0] || posted[posted.length - 1];
        }

        /** Refuses a sum on an exchange a failure left out of step, and a start or finish out of turn. */
        private void checkTurn(final String operation, final boolean starting)
        {
            checkOpen(operation);
            if (broken)
            {
                throw new DistException(operation, info, "an earlier sum on this exchange failed, so its messages may "
                    + "be out of step; the group must be joined again", null);
            }
            if (starting == inFlight)
            {
                throw new IllegalStateException(operation + ": " + (starting ? "start" : "finish") + " called twice "
                    + "without " + (starting ? "finish" : "start") + " (the peers would pair other sums' messages)");
            }
        }

        /**
         * Posts this sum's receives (and, ahead, the next sum's) unless posted already, then the sends (asynchronous:
         * the caller goes on). Messages of one tag and peer meet the receives in the order they were posted.
         *
         * @param operation what it is for, named in errors
         */
        void start(final String operation)
        {
            checkTurn(operation, true);
            inFlight = true;
            final int buffers = posted.length;
            post((int)(round % buffers), operation);
            post((int)((round + 1) % buffers), operation);
            try
            {
                for (int r = 0; r < info.worldSize(); r++)
                {
                    if (r != info.rank())
                    {
                        sends[r] = gloo.send(own, r, tag);
                    }
                }
            }
            catch (final RuntimeException ex)
            {
                broken = true;
                throw failure(operation, reason(ex), ex);
            }
        }

        /**
         * Sums now: {@link #start} and {@link #finish}, one JFR {@link AllReduceEvent} when recorded.
         *
         * @param operation what it is for, named in errors
         */
        void sum(final String operation)
        {
            final AllReduceEvent event = ALL_REDUCE_PROBE.isEnabled() ? new AllReduceEvent() : null;
            if (null != event)
            {
                event.begin();
            }
            start(operation);
            finish(operation);
            if (null != event)
            {
                commit(event, operation, tensor.nbytes());
            }
        }

        /**
         * Waits for every message (within the group's timeout) and leaves the sum in the tensor.
         *
         * @param operation what it is for, named in errors
         */
        void finish(final String operation)
        {
            checkTurn(operation, false);
            final int buffer = (int)(round % posted.length);
            final Tensor[] values = received[buffer];
            // Marked broken until every message is in: a failure below leaves the tag out of step.
            broken = true;
            for (int r = 0; r < values.length; r++)
            {
                if (r != info.rank())
                {
                    final Work receive = receives[buffer][r];
                    final Work send = sends[r];
                    receives[buffer][r] = null;
                    sends[r] = null;
                    await(receive, operation);
                    receive.releaseReference();
                    await(send, operation);
                }
            }
            broken = false;
            inFlight = false;
            posted[buffer] = false;
            round++;
            if (null == ordered)
            {
                tensor.add_(values[1 - info.rank()]);
                return;
            }
            ordered.copy_(0 == info.rank() ? tensor : values[0]);
            for (int r = 1; r < values.length; r++)
            {
                ordered.add_(r == info.rank() ? tensor : values[r]);
            }
            tensor.copy_(ordered);
        }

        /** Aborts and lets go of the receives still posted (their Works hold Gloo's connections open). */
        private void dropReceives()
        {
            for (final Work[] buffer : receives)
            {
                for (int r = 0; r < buffer.length; r++)
                {
                    final Work receive = buffer[r];
                    buffer[r] = null;
                    if (null != receive && !receive.isNull())
                    {
                        try
                        {
                            receive.abort();
                        }
                        catch (final RuntimeException alreadyOver)
                        {
                            // Completed or failed meanwhile: nothing to abort.
                        }
                        receive.releaseReference();
                    }
                }
            }
        }

        @Override
        public void close()
        {
            if (outstanding() && !closed)
            {
                // Gloo may still write into the buffers: they go with the group, after Gloo is shut down.
                parked.add(this);
                return;
            }
            dropReceives();
            natives.close();
        }
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
                ncclStore = new PrefixStore("nccl/", store);
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
        try
        {
            store.set(FAILURE_KEY, "rank " + info.rank() + ": " + message);
        }
        catch (final RuntimeException ignored)
        {
            // The store's host is gone already; the peers fail on their own error alone.
        }
    }

    /**
     * A collective's failure, with what a peer reported through {@link #reportFailure} if it did. Not asked after a
     * timeout: a hung peer may be the store's host, and asking would wait out the store's timeout as well.
     */
    private DistException failure(final String operation, final String detail, final Throwable cause)
    {
        String reported = null;
        final String lower = String.valueOf(detail).toLowerCase(Locale.ROOT);
        if (lower.contains("timed out") || lower.contains("timeout"))
        {
            return new DistException(operation, info, detail, cause);
        }
        try (StringVector key = new StringVector(FAILURE_KEY))
        {
            if (store.check(key))
            {
                try (ByteVector value = store.get(FAILURE_KEY))
                {
                    reported = new String(value.get(), StandardCharsets.UTF_8);
                }
            }
        }
        catch (final RuntimeException ignored)
        {
            // The store went with the failed rank (rank 0 hosts it): nothing more to say than our own error.
        }
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
        return (backtrace < 0 ? message : message.substring(0, backtrace)).strip().replaceAll("\\s*\n\\s*", " ");
    }

    private void checkOpen(final String operation)
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
                exchange.natives.close();
            }
            parked.clear();
        }
        options.close();
        devices.close();
        device.close();
        closeStore();
    }

    private void closeStore()
    {
        if (store != tcp)
        {
            store.close();
        }
        tcp.close();
    }
}
