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
        final picocli.CommandLine cli = Main.commandLine();
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
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--nnodes", "2", "--node-rank", "1",
            "--job-id", "job-7", "--", "x"));
        assertTrue(err.toString().contains("--master-port: expected a port when --nnodes > 1"), err::toString);
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
    void badArgumentsShouldNameTheOption()
    {
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "0", "--", "train"));
        assertTrue(err.toString().contains("--nproc"), err::toString);
        assertEquals(Main.BAD_INPUT, launch("launch", "--nproc", "2", "--master-port", "70000", "--", "train"));
        assertTrue(err.toString().contains("master_port: expected 1-65535, got 70000"), err::toString);
    }
}
