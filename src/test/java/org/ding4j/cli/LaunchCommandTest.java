package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ding4j launch}: real child JVMs with torchrun's environment, prefixed output, failure propagation. */
class LaunchCommandTest
{
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int launch(final String... args)
    {
        final Cli cli = Main.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void shouldStartEachRankWithTorchrunsEnvironmentAndPrefixItsOutput()
    {
        assertEquals(0, launch("launch", "--nproc", "3", "--master-port", "29611", "--main",
            LaunchProbe.class.getName(), "--", "train", "--seed", "1"), err::toString);
        final String text = out.toString();
        for (int r = 0; r < 3; r++)
        {
            assertTrue(text.contains("[rank " + r + "] rank=" + r + " world=3 local=" + r
                + " master=127.0.0.1:29611 args=train,--seed,1"), text);
        }
    }

    @Test
    void shouldNumberRanksByNodeOnSeveralNodes()
    {
        assertEquals(0, launch("launch", "--nproc", "2", "--nnodes", "2", "--node-rank", "1", "--master-addr",
            "10.0.0.1", "--master-port", "29500", "--job-id", "job-7", "--main", LaunchProbe.class.getName(), "--",
            "x"), err::toString);
        assertTrue(out.toString().contains("[rank 3] rank=3 world=4 local=1 master=10.0.0.1:29500"), out::toString);
        // A main of one's own needs no COMMAND; the ding4j command line does.
        out.getBuffer().setLength(0);
        assertEquals(0, launch("launch", "--nproc", "1", "--main", LaunchProbe.class.getName()), err::toString);
        assertTrue(out.toString().contains("[rank 0] rank=0 world=1 local=0"), out::toString);
        err.getBuffer().setLength(0);
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "1"));
        assertTrue(err.toString().startsWith("ding4j launch: missing COMMAND"), err::toString);
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--nnodes", "2", "--node-rank", "1",
            "--job-id", "job-7", "--", "x"));
        assertTrue(err.toString().contains("--master-port: expected a port when --nnodes > 1"), err::toString);
    }

    /** A Pendulum config on 2 ranks is one job of 2 ranks (it once ran two independent jobs into one folder). */
    @Test
    void aSacConfigOnTwoRanksShouldTrainOneJob(@TempDir final Path dir) throws Exception
    {
        final Path exp = dir.resolve("sac");
        assertEquals(0, launch("launch", "--nproc", "2", "--", "train", "--config",
            Path.of("examples/pendulum_sac.yaml").toAbsolutePath().toString(), "--set", "exp_name=" + exp, "--set",
            "pipeline.max_train_iter=150", "--set", "policy.random_collect_size=200"), err::toString);
        final com.fasterxml.jackson.databind.JsonNode summary = new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(exp.resolve("summary.json").toFile());
        assertEquals(2, summary.get("world_size").asInt(), summary::toString);
        assertEquals(150, summary.get("train_iter").asInt(), summary::toString);
        assertEquals(2 * summary.get("env_steps").asLong(), summary.get("env_steps_all_ranks").asLong());
        assertTrue(out.toString().contains("[rank 1] ding4j train: " + exp
            + ", sac on pendulum, mode serial, seed 0, threads"),
            out::toString);
    }

    @Test
    void aFailingRankShouldStopTheOthersAndSetTheExitCode(@TempDir final Path dir)
    {
        final long start = System.nanoTime();
        assertEquals(7, launch("launch", "--nproc", "2", "--main", LaunchProbe.class.getName(), "--", "fail",
            dir.toString()),
            out::toString);
        assertTrue((System.nanoTime() - start) / 1e9 < 25, "the blocked rank is stopped, not waited for");
        assertTrue(err.toString().contains("rank 1 exited with 7; stopping the other ranks"), err::toString);
        assertTrue(out.toString().contains("[rank 0] rank=0"), out::toString);
    }

    @Test
    void aFailedAttemptShouldBeRestartedUpToMaxRestarts()
    {
        assertEquals(0, launch("launch", "--nproc", "2", "--max-restarts", "2", "--job-id", "j1", "--main",
            LaunchProbe.class.getName(), "--", "fail-first-attempt", "7"), err::toString);
        final String text = out.toString();
        assertTrue(text.contains("[rank 1] rank=1") && text.contains("restart=0 job=j1"), text);
        for (int r = 0; r < 2; r++)
        {
            assertTrue(text.contains("[rank " + r + "] rank=" + r + " world=2 local=" + r), text);
            assertTrue(text.contains("args=fail-first-attempt,7 restart=1 job=j1/restart-1"), text);
        }
        assertTrue(err.toString().contains("restart 1 of at most 2, every rank from the newest verified checkpoint; "
            + "attempt 0 ended: rank 1 exited with 7"), err::toString);
        assertTrue(!text.contains("restart=2"), "one restart was enough: " + text);
    }

    @Test
    void badInputShouldNotBeRestartedAndNoRestartsShouldFailAsBefore()
    {
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--max-restarts", "3", "--main",
            LaunchProbe.class.getName(), "--", "fail-first-attempt", "2"));
        assertTrue(err.toString().contains("not restarting (bad input: a restart would fail the same way); attempt 0 "
            + "ended: rank 1 exited with 2"), err::toString);
        assertTrue(!out.toString().contains("restart=1"), out::toString);
        assertEquals(7, launch("launch", "--nproc", "2", "--main", LaunchProbe.class.getName(), "--",
            "fail-first-attempt", "7"));
        assertTrue(!out.toString().contains("restart=1"), out::toString);
    }

    /**
     * JMX and JFR under launch: each rank gets a JMX port of its own (every rank inheriting the launcher's died with
     * "Port already in use") and a recording file of its own (the launcher and both ranks wrote one file).
     */
    @Test
    void eachRankShouldGetItsOwnJmxPortAndRecordingFile(@TempDir final Path dir) throws Exception
    {
        assertEquals("-Dcom.sun.management.jmxremote.port=9012",
            LaunchCommand.rankJvmArg("-Dcom.sun.management.jmxremote.port=9010", 1));
        assertEquals("-XX:StartFlightRecording=filename=/r/a-rank0.jfr,dumponexit=true",
            LaunchCommand.rankJvmArg("-XX:StartFlightRecording=filename=/r/a.jfr,dumponexit=true", 0));
        assertEquals("-Xmx1g", LaunchCommand.rankJvmArg("-Xmx1g", 0));
        final int port = org.ding4j.testing.ChildJvm.freePort();
        final java.util.List<String> command = org.ding4j.testing.ChildJvm.javaCommand(dir, Main.class.getName());
        command.addAll(1, java.util.List.of("-Dcom.sun.management.jmxremote.port=" + port,
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-XX:StartFlightRecording=filename=" + dir.resolve("rec.jfr") + ",dumponexit=true"));
        command.addAll(java.util.List.of("launch", "--nproc", "2", "--main", LaunchProbe.class.getName(), "--", "x"));
        final Process launcher = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(launcher.getInputStream().readAllBytes(),
            java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(launcher.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(0, launcher.exitValue(), output);
        for (final String file : new String[] {"rec.jfr", "rec-rank0.jfr", "rec-rank1.jfr"})
        {
            assertTrue(java.nio.file.Files.size(dir.resolve(file)) > 0, file + " recorded: " + output);
        }
    }

    @Test
    void badArgumentsShouldNameTheOption() throws java.io.IOException
    {
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "0", "--", "train"));
        assertTrue(err.toString().contains("--nproc"), err::toString);
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--master-port", "70000", "--", "train"));
        assertTrue(err.toString().contains("master_port: expected 1-65535, got 70000"), err::toString);
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "1", "--nnodes", "2", "--node-rank", "2",
            "--master-port", "29500", "--job-id", "j", "--", "train"));
        assertTrue(err.toString().contains("0 <= node-rank < nnodes; got nproc=1 nnodes=2 node-rank=2"),
            err::toString);
        // A stranger on the master port: rank 1 once waited in libtorch's connect to it, deaf to SIGTERM, for 30 s.
        try (java.net.ServerSocket stranger = new java.net.ServerSocket(0))
        {
            assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--master-port",
                Integer.toString(stranger.getLocalPort()), "--", "train"));
            assertTrue(err.toString().contains("--master-port: expected a port free on this node (rank 0's store "
                + "listens on it), got " + stranger.getLocalPort()), err::toString);
        }
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "1", "--max-restarts", "-1", "--", "train"));
        assertTrue(err.toString().contains("--max-restarts: expected an integer >= 0, got -1"), err::toString);
        // 1,000 ranks once exhausted the machine and killed the launcher with an OutOfMemoryError trace.
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "100000", "--", "train"));
        assertTrue(err.toString().contains("--nproc: expected at most ") && err.toString().contains("got 100000"),
            err::toString);
    }
}
