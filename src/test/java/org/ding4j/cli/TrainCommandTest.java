package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;

/** {@code ding4j train}'s arguments that contradict each other are refused before anything runs. */
class TrainCommandTest
{
    @Test
    void aSeedGivenTwiceIsRefusedNotSilentlyPicked()
    {
        final StringWriter err = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setErr(new PrintWriter(err));
        assertEquals(Main.BAD_INPUT, cli.execute("train", "--seed", "3", "--set", " seed =4"));
        assertTrue(err.toString().startsWith("ding4j train: give --seed or --set seed=..., not both"), err.toString());
    }
}
