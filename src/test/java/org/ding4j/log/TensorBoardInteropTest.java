package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.ding4j.testing.PythonModule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The event files read by TensorBoard itself ({@code EventAccumulator}, what {@code tensorboard --logdir} runs,
 * which checks every record's CRCs) through {@code python3} on the PATH. Skipped with a message where that python
 * cannot import tensorboard (.ci/run installs it where the machine's pip can), except when
 * {@code DING4J_REQUIRE_TENSORBOARD} is set, where its absence fails.
 */
class TensorBoardInteropTest
{
    private static final String PYTHON = "python3";
    private static final Path SCRIPT = Path.of("src/test/resources/python/tb_read.py");
    private static final JsonMapper JSON = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
        .build();

    @TempDir
    Path dir;

    @BeforeAll
    static void requireTensorBoard() throws Exception
    {
        PythonModule.require(PYTHON, "tensorboard", "DING4J_REQUIRE_TENSORBOARD", "TensorBoard interop",
            "pip install tensorboard");
    }

    @Test
    void tensorBoardShouldReadEveryScalarAndHistogramWritten() throws Exception
    {
        final Path logdir = dir.resolve("learner_tb_logger");
        final TensorBoardWriter writer = new TensorBoardWriter(logdir);
        for (int i = 1; i <= 500; i++)
        {
            writer.addScalar("learner_iter/total_loss_avg", 1.0 / i, i);
            writer.addScalar("learner_step/total_loss_avg", 1.0 / i, 8L * i);
        }
        writer.addScalar("learner_iter/q_value_avg", Double.NaN, 500);
        writer.addScalar("learner_iter/q_value_avg", Double.POSITIVE_INFINITY, 501);
        writer.addHistogram("learner/priority", new double[] {-1.5, 0.0, 0.25, 0.25, 3.0}, 100);
        writer.close();
        assertEquals(0, writer.droppedCount());

        final JsonNode out = read(logdir);
        final JsonNode iter = out.path("scalars").path("learner_iter/total_loss_avg");
        final JsonNode step = out.path("scalars").path("learner_step/total_loss_avg");
        assertEquals(500, iter.size(), out::toString);
        assertEquals(500, step.size(), out::toString);
        for (int i = 1; i <= 500; i++)
        {
            assertEquals(i, iter.get(i - 1).get(0).asLong());
            assertEquals((float)(1.0 / i), (float)iter.get(i - 1).get(1).asDouble());
            assertEquals(8L * i, step.get(i - 1).get(0).asLong());
        }
        final JsonNode q = out.path("scalars").path("learner_iter/q_value_avg");
        assertTrue(Double.isNaN(q.get(0).get(1).asDouble()), q::toString);
        assertEquals(Double.POSITIVE_INFINITY, q.get(1).get(1).asDouble(), q::toString);
        final JsonNode histogram = out.path("histograms").path("learner/priority").get(0);
        assertEquals(100, histogram.get("step").asLong());
        assertEquals(-1.5, histogram.get("min").asDouble());
        assertEquals(3.0, histogram.get("max").asDouble());
        assertEquals(5.0, histogram.get("num").asDouble());
        assertEquals(2.0, histogram.get("sum").asDouble());
        assertEquals(List.of(1.0, 1.0, 2.0, 1.0), JSON.convertValue(histogram.get("bucket"),
            JSON.getTypeFactory().constructCollectionType(List.class, Double.class)));
    }

    private static JsonNode read(final Path logdir) throws Exception
    {
        final Process process = new ProcessBuilder(PYTHON, SCRIPT.toString(), logdir.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "tb_read.py did not finish");
        assertEquals(0, process.exitValue(), () -> "tb_read.py failed: " + stdout);
        return JSON.readTree(stdout);
    }
}
