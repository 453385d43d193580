package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ding4j train}'s arguments that contradict each other are refused before anything runs. */
class TrainCommandTest
{
    @Test
    void aSeedGivenTwiceIsRefusedNotSilentlyPicked(@TempDir final Path dir)
    {
        final StringWriter err = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setErr(new PrintWriter(err));
        // A folder of the test's own, should the check ever let the run start.
        assertEquals(Main.BAD_INPUT, cli.execute("train", "--seed", "3", "--set", " seed =4", "--set",
            "exp_name=" + dir.resolve("run")));
        assertTrue(err.toString().startsWith("ding4j train: give --seed or --set seed=..., not both"), err.toString());
    }
}
