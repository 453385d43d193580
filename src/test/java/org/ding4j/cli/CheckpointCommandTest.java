package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code ding4j checkpoint inspect} on the PyTorch-written fixture, checked against its sidecar. */
@Tag("native")
class CheckpointCommandTest
{
    private static final Path FIXTURE =
        Path.of("src/test/resources/fixtures/checkpoints/dqn_cartpole_iteration_5.pth.tar");

    @Test
    void shouldPrintEveryTensorWithPathDtypeShapeSumAndFirst() throws Exception
    {
        final StringWriter out = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setOut(new PrintWriter(out));
        assertEquals(0, cli.execute("checkpoint", "inspect", FIXTURE.toString()));
        final ObjectMapper json = new ObjectMapper();
        final JsonNode tree = json.readTree(out.toString());
        final JsonNode sidecar = json.readTree(FIXTURE.resolveSibling(FIXTURE.getFileName() + ".json").toFile());
        assertEquals(5, tree.get("last_iter").asLong());
        assertEquals(40, tree.get("last_step").asLong());
        sidecar.get("model").fields().forEachRemaining(e -> {
            final JsonNode tensor = tree.get("model").get(e.getKey());
            assertEquals("model." + e.getKey(), tensor.get("path").asText());
            assertEquals("float32", tensor.get("dtype").asText());
            assertEquals(e.getValue().get("shape"), tensor.get("shape"));
            assertEquals(e.getValue().get("sum").asDouble(), tensor.get("sum").asDouble(), 1e-5);
            assertEquals(e.getValue().get("first").asDouble(), tensor.get("first").asDouble(), 0.0);
        });
        final JsonNode group = tree.get("optimizer").get("param_groups").get(0);
        assertEquals(sidecar.get("optimizer_param_groups").get(0), group, "plain values print as they are");
    }

    @Test
    void shouldExitWithTwoAndTheFileNameForAnUnusableOrMissingFile()
    {
        final StringWriter err = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setErr(new PrintWriter(err));
        assertEquals(2, cli.execute("checkpoint", "inspect", "pom.xml"), "not a checkpoint is bad input, as for eval");
        assertTrue(err.toString().startsWith("ding4j: checkpoint pom.xml is unusable"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, cli.execute("checkpoint", "inspect", "no-such.pth.tar"));
        assertEquals("ding4j: FILE: no-such.pth.tar does not exist", err.toString().strip());
        assertEquals(2, Main.commandLine().execute("checkpoint", "inspect"), "a missing FILE is bad input");
    }
}
