package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.testing.PythonModule;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.StateDictReport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints crossing over to real PyTorch and back, through Debian's {@code python3-torch} (PyTorch 1.13) at
 * {@code /usr/bin/python3}. Skipped with a message where it is not installed, except when
 * {@code DING4J_REQUIRE_PYTORCH} is set (CI sets it after installing the package), where its absence fails.
 */
@Tag("native")
class PyTorchInteropTest
{
    private static final String PYTHON = "/usr/bin/python3";
    private static final Path SCRIPT = Path.of("src/test/resources/python/torch_interop.py");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TorchCheckpointIO io = new TorchCheckpointIO();

    @TempDir
    Path dir;

    @BeforeAll
    static void requirePyTorch() throws Exception
    {
        PythonModule.require(PYTHON, "torch", "DING4J_REQUIRE_PYTORCH", "PyTorch interop",
            "apt-get install python3-torch");
    }

    @Test
    void pythonShouldLoadWhatDing4jWritesIntoTorchNnAndTorchOptim() throws Exception
    {
        final Path file = dir.resolve("ding4j.pth.tar");
        final Map<String, Object> state = new LinkedHashMap<>();
        final double expAvgSum;
        try (PointerScope scope = new PointerScope();
            Mlp mlp = seeded(4, 16, 2);
            FlatParameters flat = FlatParameters.of(mlp.module());
            FusedAdam adam = new FusedAdam(flat, AdamConfig.adam(3e-3)))
        {
            for (int i = 0; i < 3; i++)
            {
                flat.zeroGrad();
                mlp.forward(torch.randn(8, 4)).pow(new org.bytedeco.pytorch.Scalar(2.0)).mean().backward();
                adam.step();
            }
            state.put("model", flat.stateDict());
            state.put("optimizer", adam.stateDict());
            state.put("last_iter", 3L);
            state.put("big", 1L << 40);
            state.put("negative", -7L);
            state.put("ratio", 0.25);
            state.put("name", "ding4j ✓");
            state.put("flags", Arrays.asList(true, false, null));
            final Map<String, Object> nested = new LinkedHashMap<>();
            nested.put("ints", torch.arange(new org.bytedeco.pytorch.Scalar(6)).reshape(2, 3));
            nested.put("mask", torch.randn(5).gt(new org.bytedeco.pytorch.Scalar(0.0)));
            nested.put("doubles", torch.randn(3).to(torch.ScalarType.Double));
            nested.put("halves", torch.randn(4).to(torch.ScalarType.Half));
            nested.put("transposed", torch.randn(3, 2).t());
            nested.put("empty", torch.empty(new long[] {0, 3}, new TensorOptions(torch.ScalarType.Float),
                new MemoryFormatOptional()));
            state.put("nested", nested);
            io.write(file, state);
            final Map<?, ?> moments = (Map<?, ?>)((Map<?, ?>)adam.stateDict().get("state")).get(0L);
            expAvgSum = ((Tensor)moments.get("exp_avg")).to(torch.ScalarType.Double).sum().item_double();

            final JsonNode out = python("check", file);
            assertDescribes(state, out.get("checkpoint"), "");
            final JsonNode loaded = out.get("loaded");
            assertEquals(3e-3, loaded.get("lr").asDouble());
            assertEquals(List.of(0.9, 0.999), List.of(loaded.get("betas").get(0).asDouble(),
                loaded.get("betas").get(1).asDouble()));
            assertEquals(3.0, loaded.get("step_param0").asDouble());
            assertEquals(expAvgSum, loaded.get("exp_avg_sum_param0").asDouble(), 1e-9 * Math.abs(expAvgSum) + 1e-12);
        }
    }

    @Test
    void ding4jShouldLoadADiEngineStyleCheckpointThatPyTorchWrote() throws Exception
    {
        final Path file = dir.resolve("python.pth.tar");
        final JsonNode expected = python("write", file);
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = io.read(file);
            assertDescribes(state, expected, "");
            assertEquals(3L, state.get("last_iter"));
            assertEquals(24L, state.get("last_step"));

            final Map<?, ?> model = (Map<?, ?>)state.get("model");
            final List<String> names = new ArrayList<>();
            final List<Tensor> params = new ArrayList<>();
            for (final Map.Entry<?, ?> e : model.entrySet())
            {
                names.add((String)e.getKey());
                params.add(torch.zeros(((Tensor)e.getValue()).sizes().vec().get()).requires_grad_(true));
            }
            try (FlatParameters flat = FlatParameters.of(names, params);
                FusedAdam adam = new FusedAdam(flat, AdamConfig.adam(1e-3)))
            {
                assertTrue(flat.loadStateDict(model, true).isEmpty());
                for (int i = 0; i < flat.size(); i++)
                {
                    assertTrue(flat.view(i).equal((Tensor)model.get(names.get(i))), names.get(i));
                }
                @SuppressWarnings("unchecked")
                final Map<String, Object> optimizer = (Map<String, Object>)state.get("optimizer");
                adam.loadStateDict(optimizer);
                assertEquals(3L, adam.stepCount(), "PyTorch's tensor step becomes the fused step count");
                final Map<?, ?> back = (Map<?, ?>)((Map<?, ?>)adam.stateDict().get("state")).get(4L);
                final Map<?, ?> saved = (Map<?, ?>)((Map<?, ?>)optimizer.get("state")).get(4L);
                assertTrue(((Tensor)back.get("exp_avg_sq")).equal((Tensor)saved.get("exp_avg_sq")));

                // A model with one parameter renamed and one reshaped: strict fails naming all three, lenient
                // loads the rest and reports them.
                final List<String> renamed = new ArrayList<>(names);
                renamed.set(0, "encoder.0.w");
                final List<Tensor> reshaped = new ArrayList<>();
                for (int i = 0; i < params.size(); i++)
                {
                    reshaped.add(i == params.size() - 1 ? torch.zeros(3).requires_grad_(true)
                        : torch.zeros(params.get(i).sizes().vec().get()).requires_grad_(true));
                }
                try (FlatParameters other = FlatParameters.of(renamed, reshaped))
                {
                    final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                        () -> other.loadStateDict(model, true));
                    assertEquals("state dict does not match the model (strict load): missing keys [encoder.0.w], "
                        + "unexpected keys [encoder.0.weight], mismatched [head.bias: checkpoint has shape [2], the "
                        + "model [3]]", ex.getMessage());
                    assertEquals(0.0, other.group(0).values().abs().sum().item_double(), "strict loads nothing");
                    final StateDictReport report = other.loadStateDict(model, false);
                    assertEquals(List.of("encoder.0.w"), report.missing());
                    assertTrue(other.view(1).equal((Tensor)model.get(names.get(1))), "the intersection loads");
                }
            }
        }
    }

    @Test
    void inspectShouldDescribeOneViewRebuiltByManyKeysOnce() throws Exception
    {
        // 20,000 tensor objects over one 100,000-float storage: described each on its own, their sums' temporaries
        // (800 KB each) took 16 GB before the first was freed.
        final Path file = dir.resolve("views.pth.tar");
        final JsonNode sums = python("views", file);
        try (PointerScope scope = new PointerScope())
        {
            final JsonNode described = CheckpointInspector.describe(io.read(file));
            assertEquals(20003, described.size());
            for (final String key : List.of("k0", "k1", "k19999"))
            {
                assertEquals(key, described.get(key).get("path").asText());
                assertEquals(sums.get("k0").asDouble(), described.get(key).get("sum").asDouble());
                assertEquals(100000, described.get(key).get("shape").get(0).asLong());
            }
            // Views of that storage at another offset, shape or stride are each described as themselves.
            for (final String key : List.of("offset", "short", "stride"))
            {
                assertEquals(sums.get(key).asDouble(), described.get(key).get("sum").asDouble(), key);
            }
            assertEquals(2.0, described.get("offset").get("first").asDouble());
        }
    }

    private static Mlp seeded(final long... sizes)
    {
        torch.manual_seed(11);
        return Mlp.of(sizes);
    }

    /** Asserts that Python's description (tensors as dtype, shape, sum, first) matches a Java tree. */
    private static void assertDescribes(final Object java, final JsonNode python, final String path)
    {
        if (java instanceof Tensor t)
        {
            final Tensor flat = t.reshape(-1);
            assertEquals(TorchDtypes.byScalarType(t.scalar_type(), path).pythonName(), python.get("dtype").asText(),
                path);
            final long[] shape = new long[python.get("shape").size()];
            for (int d = 0; d < shape.length; d++)
            {
                shape[d] = python.get("shape").get(d).asLong();
            }
            assertArrayEquals(shape, t.sizes().vec().get(), path);
            final double sum = flat.to(torch.ScalarType.Double).sum().item_double();
            assertEquals(sum, python.get("sum").asDouble(), 1e-9 * Math.abs(sum) + 1e-12, path);
            if (flat.numel() > 0)
            {
                assertEquals(flat.get(0).to(torch.ScalarType.Double).item_double(), python.get("first").asDouble(),
                    0.0, path);
            }
        }
        else if (java instanceof Map<?, ?> map)
        {
            assertEquals(map.size(), python.size(), path + " size");
            for (final Map.Entry<?, ?> e : map.entrySet())
            {
                final JsonNode child = python.get(String.valueOf(e.getKey()));
                assertTrue(null != child, path + "." + e.getKey() + " is missing on the Python side");
                assertDescribes(e.getValue(), child, path + "." + e.getKey());
            }
        }
        else if (java instanceof List<?> list)
        {
            assertEquals(list.size(), python.size(), path + " length");
            for (int i = 0; i < list.size(); i++)
            {
                assertDescribes(list.get(i), python.get(i), path + "[" + i + "]");
            }
        }
        else if (null == java)
        {
            assertTrue(python.isNull(), path);
        }
        else if (java instanceof Boolean b)
        {
            assertEquals(b, python.asBoolean(), path);
        }
        else if (java instanceof Long l)
        {
            assertTrue(python.isIntegralNumber(), path + " stays an int");
            assertEquals(l, python.asLong(), path);
        }
        else if (java instanceof Double d)
        {
            assertEquals(d, python.asDouble(), 0.0, path);
        }
        else
        {
            assertEquals(java, python.asText(), path);
        }
    }

    private JsonNode python(final String command, final Path file) throws IOException, InterruptedException
    {
        final Path log = dir.resolve(command + ".err");
        final Process process = new ProcessBuilder(PYTHON, SCRIPT.toString(), command, file.toString())
            .redirectError(log.toFile()).start();
        final byte[] out = process.getInputStream().readAllBytes();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "python did not finish");
        assertEquals(0, process.exitValue(), () -> "python " + command + " failed: " + read(log));
        return JSON.readTree(new String(out, StandardCharsets.UTF_8));
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }
}
