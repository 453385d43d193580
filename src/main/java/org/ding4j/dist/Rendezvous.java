package org.ding4j.dist;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.ByteVector;
import org.bytedeco.pytorch.PrefixStore;
import org.bytedeco.pytorch.Store;
import org.bytedeco.pytorch.StringVector;
import org.bytedeco.pytorch.TCPStore;
import org.bytedeco.pytorch.TCPStoreOptions;
import org.ding4j.torch.Threads;
import org.slf4j.LoggerFactory;

/**
 * A {@link DistGroup}'s meeting point: the {@code TCPStore} that rank 0 hosts at {@code MASTER_ADDR:MASTER_PORT}
 * (under torchrun's static rendezvous, {@code TORCHELASTIC_USE_AGENT_STORE=True}, the one its agent hosts there,
 * under its prefix per attempt), the check that every rank joined the same job with the same world size and
 * settings, and the key where a failing rank leaves its cause for the others. The backends (Gloo, NCCL) rendezvous on
 * {@link #store()}. Owned by its group, which closes it last.
 */
final class Rendezvous implements AutoCloseable
{
    /** The store key under which a failing rank leaves its cause for the others. */
    private static final String FAILURE_KEY = "ding4j/failure";
    /** Where rank 0 writes the job's identity for the others to check. */
    private static final String JOB_KEY = "ding4j/job";
    /** Set by a rank once it has read rank 0's identity, so that rank 0 (the store's host) knows it may exit. */
    private static final String READ_SUFFIX = "/read";
    /**
     * The longest pause between two questions to a peer that is not there yet. The rendezvous asks instead of waiting
     * in c10d: an interrupt of the waiting thread ends a pause (the command line's SIGTERM from {@code ding4j launch}
     * stopping a rank whose peer died during start-up), where one native wait of the whole timeout (300 s by
     * default) would not return until it passed.
     */
    private static final Duration MAX_PAUSE = Duration.ofMillis(250);
    /** How long one probe of the store's host may take to connect. */
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    private final DistInfo info;
    private final Duration timeout;
    /** The connection to the store (hosted by rank 0, or by torchrun's agent). */
    private final TCPStore tcp;
    /** What the ranks rendezvous on: the store itself, or torchrun's prefix of it. */
    private final Store store;

    /**
     * Connects to (rank 0: hosts) the store and checks the job. Every wait for a peer is interruptible: an interrupt
     * of the calling thread ends it with a {@link DistException} that says so (the thread's interrupt status stays
     * set). Gloo's connection after it, once every peer has joined, is not.
     *
     * @param info     this process's place
     * @param timeout  how long the store waits for a key or a peer
     * @param settings one setting per line that every rank must share
     * @throws DistException if the store cannot be reached or hosted, the ranks' jobs differ, or the thread was
     *                       interrupted while waiting
     */
    Rendezvous(final DistInfo info, final Duration timeout, final String settings)
    {
        this.info = info;
        this.timeout = timeout;
        tcp = connect();
        try
        {
            store = info.usesAgentStore() ? new PrefixStore(info.agentStore(), tcp) : tcp;
        }
        catch (final RuntimeException ex)
        {
            tcp.close();
            throw ex;
        }
        try
        {
            checkJob(settings);
        }
        catch (final RuntimeException ex)
        {
            close();
            throw ex;
        }
    }

    /**
     * Hosts the store (rank 0 without torchrun's agent) or connects to it once its host listens: a client waits for
     * the host with plain socket probes (an interrupt ends that wait), not in c10d's connect, which an interrupt
     * cannot end and which prints an error and a native backtrace for each attempt that times out.
     */
    private TCPStore connect()
    {
        final boolean host = hostsStore();
        final long deadline = System.nanoTime() + timeout.toNanos();
        if (!host)
        {
            awaitHost(deadline);
        }
        // A host that answered the probe takes c10d's connection at once, even at the deadline's edge.
        final long left = Math.max(PROBE_TIMEOUT.toMillis(), (deadline - System.nanoTime()) / 1_000_000);
        try
        {
            final TCPStore connected = host ? make(true, timeout.toMillis()) : makeWithin(left);
            try (Milliseconds whole = new Milliseconds(timeout.toMillis()))
            {
                // A key's wait or a collective's store access may take the whole timeout from here on.
                connected.setTimeout(whole);
            }
            catch (final RuntimeException ex)
            {
                connected.close();
                throw ex;
            }
            return connected;
        }
        catch (final DistException ex)
        {
            throw ex;  // said already (a store that never answered, an interrupted wait)
        }
        catch (final RuntimeException ex)
        {
            final String reason = DistGroup.reason(ex);
            throw new DistException("rendezvous", info, "TCPStore at " + address()
                + (reason.toLowerCase(Locale.ROOT).contains("address already in use")
                ? " cannot be hosted: the port is in use (another job? give each job its own --master-port): "
                : " failed within " + timeout.toMillis() + " ms: ") + reason, ex);
        }
    }

    /** c10d's store, hosted or connected to, within {@code millis}. */
    private TCPStore make(final boolean host, final long millis)
    {
        try (Milliseconds connectWithin = new Milliseconds(millis);
            TCPStoreOptions storeOptions = new TCPStoreOptions()
                .port((short)info.masterPort())
                .isServer(host)
                .waitWorkers(false)
                .timeout(connectWithin))
        {
            return new TCPStore(info.masterAddr(), storeOptions);
        }
    }

    /**
     * A client's connection, made on a thread of its own and waited for at most {@code millis} (and a probe's time
     * more): a listener that accepts and never answers (another service on the port) kept c10d's handshake, which no
     * timeout or interrupt ends, waiting for ever, past the rendezvous timeout and deaf to SIGTERM. Such a thread is
     * left to its wait (a daemon, with the store it may still make closed when it does).
     *
     * @throws DistException if the store does not answer in time, or the wait is interrupted
     */
    private TCPStore makeWithin(final long millis)
    {
        final CompletableFuture<TCPStore> made = new CompletableFuture<>();
        final Thread maker = Threads.newThread(() -> {
            try
            {
                final TCPStore store = make(false, millis);
                if (!made.complete(store))
                {
                    store.close();
                }
            }
            catch (final RuntimeException | Error ex)
            {
                made.completeExceptionally(ex);
            }
        }, "store-connect");
        // A daemon whatever the application's factory makes: one left in a handshake that never ends must not keep
        // the JVM from exiting.
        maker.setDaemon(true);
        maker.start();
        try
        {
            return made.get(millis + PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof Error error)
            {
                throw error;
            }
            throw ex.getCause() instanceof RuntimeException runtime ? runtime
                : new IllegalStateException(ex.getCause());
        }
        catch (final TimeoutException ex)
        {
            abandon(made);
            throw new DistException("rendezvous", info, "TCPStore at " + address() + " accepted the connection but "
                + "did not answer within " + millis + " ms: is another service listening on that port?", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            abandon(made);
            throw new DistException("rendezvous", info, "interrupted while waiting for the store at " + address()
                + " to answer", ex);
        }
    }

    /** A connection given up on: a store made after all is closed by the thread that made it. */
    private static void abandon(final CompletableFuture<TCPStore> made)
    {
        if (!made.completeExceptionally(new CancellationException("abandoned")) && !made.isCompletedExceptionally())
        {
            made.join().close();
        }
    }

    /**
     * Waits until the store's host accepts connections. A host name that does not resolve is said once, at once: the
     * wait goes on (a cluster's names may come up after its ranks), but a typo should not look like a slow peer for
     * the whole timeout.
     *
     * @throws DistException if the deadline passes first (said here: c10d's own connect would print an error and a
     *                       native backtrace for each of its attempts), or the thread is interrupted
     */
    private void awaitHost(final long deadline)
    {
        boolean unresolvedSaid = false;
        IOException last = null;
        for (int attempt = 0; System.nanoTime() - deadline < 0; attempt++)
        {
            try
            {
                // Resolved on each attempt (a name that does not resolve yet may later), every address of it tried,
                // as c10d's connect does.
                probe(InetAddress.getAllByName(info.masterAddr()));
                return;
            }
            catch (final UnknownHostException unresolved)
            {
                last = unresolved;
                if (!unresolvedSaid)
                {
                    unresolvedSaid = true;
                    LoggerFactory.getLogger(Rendezvous.class).warn("rank {} of {}: the store's host {} does not "
                        + "resolve; waiting for it within the rendezvous timeout ({} ms)", info.rank(),
                        info.worldSize(), info.masterAddr(), timeout.toMillis());
                }
                pause(attempt, "the store's host " + info.masterAddr() + " does not resolve");
            }
            catch (final IOException notYet)
            {
                last = notYet;
                pause(attempt, "no store at " + address() + " yet");
            }
        }
        throw new DistException("rendezvous", info, "TCPStore at " + address() + " failed within "
            + timeout.toMillis() + " ms: no store answered" + (null == last ? ""
            : " (" + (last instanceof UnknownHostException ? "the name does not resolve" : last.getMessage()) + ")"),
            last);
    }

    /**
     * Returns once one of the addresses (at least one: a resolved name's) accepts a connection on the store's port.
     *
     * @throws IOException the last address's refusal if none does
     */
    private void probe(final InetAddress[] addresses) throws IOException
    {
        for (int i = 0; ; i++)
        {
            try (Socket probe = new Socket())
            {
                probe.connect(new InetSocketAddress(addresses[i], info.masterPort()), (int)PROBE_TIMEOUT.toMillis());
                return;
            }
            catch (final IOException ex)
            {
                if (i == addresses.length - 1)
                {
                    throw ex;
                }
            }
        }
    }

    /** @return whether this rank hosts the store: rank 0, unless torchrun's agent hosts it */
    private boolean hostsStore()
    {
        return 0 == info.rank() && !info.usesAgentStore();
    }

    /**
     * @return whether the store's host no longer accepts connections (it failed, and took the store with it): then
     *     c10d's client, asked anyway, prints a warning with a native backtrace per call before it throws, ahead of
     *     the rank's own one-line error. A plain socket's probe says so without a word (the host ignores it).
     */
    private boolean hostGone()
    {
        if (hostsStore())
        {
            return false;
        }
        try
        {
            probe(InetAddress.getAllByName(info.masterAddr()));
            return false;
        }
        catch (final IOException ex)
        {
            return true;
        }
    }

    /** @return the store's {@code host:port}, as the messages name it */
    private String address()
    {
        return info.masterAddr() + ":" + info.masterPort();
    }

    /** @return what the backends rendezvous on */
    Store store()
    {
        return store;
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
        try
        {
            await(key, limit, "its peer did not read the mismatch");
        }
        catch (final RuntimeException timedOut)
        {
            // The peer is gone or slow, or this thread was interrupted: the mismatch is reported regardless.
        }
    }

    private String read(final String key, final String missing)
    {
        try
        {
            await(key, timeout, missing);
            try (ByteVector value = store.get(key))
            {
                return new String(value.get(), StandardCharsets.UTF_8);
            }
        }
        catch (final DistException ex)
        {
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            throw new DistException("rendezvous", info, missing + " at " + address() + " within "
                + timeout.toMillis() + " ms: " + DistGroup.reason(ex), ex);
        }
    }

    /**
     * Waits for a key, asking the store for it with a growing pause between two questions (at most
     * {@link #MAX_PAUSE}), for at most {@code limit}: an interrupt ends the pause, where c10d's own wait for a key
     * would not return before its timeout, and prints a warning for each that passes.
     *
     * @param missing what is missing while it waits, for the messages
     * @throws DistException    if the key did not come within the limit, or the thread is interrupted
     * @throws RuntimeException c10d's error if the store is gone
     */
    private void await(final String key, final Duration limit, final String missing)
    {
        final long deadline = System.nanoTime() + limit.toNanos();
        try (StringVector keys = new StringVector(key))
        {
            for (int attempt = 0; !store.check(keys); attempt++)
            {
                if (System.nanoTime() - deadline >= 0)
                {
                    throw new DistException("rendezvous", info, missing + " at " + address() + " within "
                        + limit.toMillis() + " ms", null);
                }
                pause(attempt, missing + " yet");
            }
        }
    }

    /**
     * Sleeps between two questions to a peer, 1 ms doubling to {@link #MAX_PAUSE}: a peer that comes at once is
     * seen at once, and a long wait costs the store a question every quarter second.
     *
     * @throws DistException if the thread is interrupted (its status stays set)
     */
    private void pause(final int attempt, final String why)
    {
        try
        {
            Thread.sleep(Math.min(MAX_PAUSE.toMillis(), 1L << Math.min(attempt, 16)));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new DistException("rendezvous", info, "interrupted while waiting: " + why, ex);
        }
    }

    private void compare(final String theirs, final String mine, final String who)
    {
        final String[] a = mine.split("\n", -1);
        final String[] b = theirs.split("\n", -1);
        if (!a[0].equals(b[0]))
        {
            throw new DistException("rendezvous", info, "the store at " + address() + " serves job " + b[0]
                + ", not this job " + a[0] + ": another job uses this port", null);
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
        return HexFormat.of().formatHex(digest(text), 0, 6);
    }

    /**
     * @param text what the ranks compare (a config, a parameter layout)
     * @return its SHA-256 digest, of its UTF-8 bytes
     */
    static byte[] digest(final String text)
    {
        try
        {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("every JVM has SHA-256", ex);
        }
    }

    /**
     * Leaves this rank's failure for the others (best effort: the store's host may be gone).
     *
     * @param message the cause
     */
    void reportFailure(final String message)
    {
        if (hostGone())
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

    /** @return what a peer reported through {@link #reportFailure}, or null (none, or the store is gone) */
    String reportedFailure()
    {
        if (hostGone())
        {
            return null;
        }
        try (StringVector key = new StringVector(FAILURE_KEY))
        {
            if (store.check(key))
            {
                try (ByteVector value = store.get(FAILURE_KEY))
                {
                    return new String(value.get(), StandardCharsets.UTF_8);
                }
            }
        }
        catch (final RuntimeException ignored)
        {
            // The store went with the failed rank (rank 0 hosts it): nothing more to say than our own error.
        }
        return null;
    }

    @Override
    public void close()
    {
        if (store != tcp)
        {
            store.close();
        }
        tcp.close();
    }
}
