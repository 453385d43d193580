package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input at the rendezvous of a two-node job (two launchers on loopback, one rank each, the real CartPole
 * command): each ends with a one-line error naming what differs and a non-zero exit, well within the timeout, never
 * a hang.
 */
class RendezvousErrorsTest
{
    /** The rendezvous and collective timeout the ranks get: the errors below must come sooner, or at it. */
    private static final int TIMEOUT_S = 120;

    @TempDir
    Path dir;

    @Test
    void ranksWithDifferentConfigsShouldBothFailNamingTheKey() throws Exception
    {
        final int port = ChildJvm.freePort();
        final ChildJvm node0 = node(0, 2, port, "policy.learn.batch_size=64");
        final ChildJvm node1 = node(1, 2, port, "policy.learn.batch_size=32");
        final long start = System.nanoTime();
        assertNotEquals(0, node0.await(120), node0::output);
        assertNotEquals(0, node1.await(120), node1::output);
        assertTrue((System.nanoTime() - start) / 1e9 < TIMEOUT_S / 2, "both fail at once, not at the timeout");
        assertTrue(node1.output().contains("ding4j: rendezvous failed on rank 1 of 2: rank 0 runs another config: "
            + "policy.learn.batch_size: 64 on rank 0, policy.learn.batch_size: 32 here (config sha256 "), node1::output);
        assertTrue(node0.output().contains("ding4j: rendezvous failed on rank 0 of 2: rank 1 runs another config: "
            + "policy.learn.batch_size: 32 on rank 1, policy.learn.batch_size: 64 here"), node0::output);
    }

    @Test
    void ranksWithDifferentWorldSizesShouldBothFail() throws Exception
    {
        final int port = ChildJvm.freePort();
        final ChildJvm node0 = node(0, 2, port, "seed=0");
        final ChildJvm node1 = node(1, 3, port, "seed=0");
        assertNotEquals(0, node0.await(120), node0::output);
        assertNotEquals(0, node1.await(120), node1::output);
        assertTrue(node0.output().contains("rank 1 was started with world size 3, this rank with world size 2: every "
            + "rank needs the same world size"), node0::output);
        assertTrue(node1.output().contains("rank 0 was started with world size 2, this rank with world size 3"),
            node1::output);
    }

    @Test
    void anUnreachableMasterShouldBeNamedWithinTheTimeout() throws Exception
    {
        // Nobody hosts this port: node 0 was never started.
        final int port = ChildJvm.freePort();
        final long start = System.nanoTime();
        final ChildJvm node1 = node(1, 2, port, "pipeline.dist_timeout_s=3");
        assertNotEquals(0, node1.await(120), node1::output);
        assertTrue((System.nanoTime() - start) / 1e9 < 90, "JVM start, native load and the 3 s timeout, not a hang");
        final String error = node1.firstLine(l -> l.startsWith("[rank 1] ding4j: "));
        assertTrue(error.contains("rendezvous failed on rank 1 of 2: TCPStore at 127.0.0.1:" + port
            + " failed within 3000 ms"), node1::output);
        assertEquals(1, node1.output().lines().filter(l -> l.startsWith("[rank 1] ding4j: ")).count(),
            node1::output);
        assertTrue(node1.output().lines().noneMatch(l -> l.contains("frame #")), "no native backtrace");
        // The learner (its logs) comes after the rendezvous: a rank that never joined wrote nothing into the folder
        // (a rank of a job refused the folder once added a line to the running job's rank log).
        assertFalse(java.nio.file.Files.exists(dir.resolve("exp/log")), node1::output);
    }

    /**
     * Another service on the master port, which accepts connections and never answers: c10d's handshake waited for
     * ever (past the rendezvous timeout, deaf to SIGTERM until the launcher's 30 s grace ran out).
     */
    @Test
    void aListenerThatNeverAnswersShouldBeNamedWithinTheTimeout() throws Exception
    {
        try (java.net.ServerSocket stranger = new java.net.ServerSocket(0))
        {
            final ChildJvm node1 = node(1, 2, stranger.getLocalPort(), "pipeline.dist_timeout_s=3");
            assertNotEquals(0, node1.await(120), node1::output);
            assertTrue(node1.output().contains("rendezvous failed on rank 1 of 2: TCPStore at 127.0.0.1:"
                + stranger.getLocalPort() + " accepted the connection but did not answer within"), node1::output);
            final String error = node1.firstLine(l -> l.startsWith("[rank 1] ding4j: "));
            assertEquals(error.indexOf("rendezvous failed"), error.lastIndexOf("rendezvous failed"), error);
        }
    }

    @Test
    void aStopShouldEndRankZerosWaitForARankThatNeverJoins() throws Exception
    {
        final int port = ChildJvm.freePort();
        stopWhileWaiting(0, port, "interrupted while waiting: rank 1 did not join yet");
    }

    @Test
    void aStopShouldEndAWaitForAStoreThatNeverComes() throws Exception
    {
        final int port = ChildJvm.freePort();
        stopWhileWaiting(1, port, "interrupted while waiting: no store at 127.0.0.1:" + port + " yet");
    }

    @Test
    void aHostNameThatDoesNotResolveShouldBeSaidAtOnce() throws Exception
    {
        final ChildJvm node = node(1, 2, ChildJvm.freePort(), "seed=0", "nosuchhost.invalid",
            line -> line.contains("the store's host nosuchhost.invalid does not resolve; waiting for it within the "
                + "rendezvous timeout (" + TIMEOUT_S * 1000 + " ms)"));
        assertTrue(node.reached.await(TIMEOUT_S, TimeUnit.SECONDS), node::output);
        node.process.toHandle().destroy();
        assertNotEquals(0, node.await(TIMEOUT_S), node::output);
        assertTrue(node.output().contains("interrupted while waiting: the store's host nosuchhost.invalid does not "
            + "resolve"), node::output);
    }

    /**
     * Starts one node of a two-node job whose other node never comes, stops its launcher (SIGTERM, which stops the
     * rank with SIGTERM) once the rank has begun, and checks that the rank ends its wait itself, saying what it
     * waited for: before, the wait lasted the whole timeout, and only the launcher's SIGKILL after its 30 s grace
     * ended the rank, which said nothing.
     */
    private void stopWhileWaiting(final int nodeRank, final int port, final String said) throws Exception
    {
        final ChildJvm node = node(nodeRank, 2, port, "seed=0", "127.0.0.1",
            line -> line.contains("ding4j train: ") && line.contains("rank " + nodeRank + " of 2"));
        assertTrue(node.reached.await(TIMEOUT_S, TimeUnit.SECONDS), node::output);
        // ProcessHandle's destroy: SIGTERM, as Process.destroy() sends, without closing the launcher's output.
        node.process.toHandle().destroy();
        assertNotEquals(0, node.await(TIMEOUT_S), node::output);
        assertTrue(node.output().contains("rendezvous failed on rank " + nodeRank + " of 2: " + said), node::output);
    }

    /** One node's launcher with one rank of a job of {@code nodes} nodes, its config changed by {@code set}. */
    private ChildJvm node(final int nodeRank, final int nodes, final int port, final String set) throws IOException
    {
        return node(nodeRank, nodes, port, set, "127.0.0.1", line -> false);
    }

    private ChildJvm node(final int nodeRank, final int nodes, final int port, final String set, final String master,
        final Predicate<String> milestone) throws IOException
    {
        final List<String> command = new ArrayList<>(ChildJvm.javaCommand(dir, Main.class.getName()));
        command.addAll(List.of("launch", "--nproc", "1", "--nnodes", Integer.toString(nodes), "--node-rank",
            Integer.toString(nodeRank), "--master-addr", master, "--master-port", Integer.toString(port),
            "--job-id", "rendezvous-test", "--", "train", "--set", "exp_name=exp",
            "--set", "pipeline.dist_timeout_s=" + TIMEOUT_S, "--set", "pipeline.warmup_updates=0", "--set", set));
        return ChildJvm.start(nodeRank, new ProcessBuilder(command).directory(dir.toFile()), milestone);
    }
}
