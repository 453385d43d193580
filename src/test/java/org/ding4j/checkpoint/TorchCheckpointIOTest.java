package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("native")
@SuppressWarnings("unchecked")
class TorchCheckpointIOTest
{
    private static final Path FIXTURE = Path.of("src/test/resources/fixtures/checkpoints/dqn_cartpole_iteration_5.pth.tar");

    private final TorchCheckpointIO io = new TorchCheckpointIO();

    @TempDir
    Path dir;

    @Test
    void shouldRoundTripEverySupportedType() throws IOException
    {
        try (PointerScope scope = new PointerScope())
        {
            torch.manual_seed(3);
            final Tensor weights = torch.randn(3, 4);
            final Tensor ints = torch.arange(new org.bytedeco.pytorch.Scalar(6)).reshape(2, 3);
            final Tensor doubles = torch.randn(5).to(torch.ScalarType.Double);
            final Tensor strided = torch.randn(4, 2).t();
            final Map<String, Object> state = new LinkedHashMap<>();
            state.put("model", new LinkedHashMap<>(Map.of("w", weights, "i", ints, "d", doubles, "t", strided)));
            final Map<Long, Object> byIndex = new LinkedHashMap<>();
            byIndex.put(0L, Map.of("step", 12L));
            state.put("optimizer", Map.of("state", byIndex, "param_groups", List.of(Map.of("lr", 1e-3,
                "betas", List.of(0.9, 0.999), "amsgrad", false))));
            state.put("name", "dqn ✓");
            state.put("nothing", null);
            state.put("last_iter", 42L);
            state.put("extremes", List.of(Long.MIN_VALUE, -1L, 255L, 65536L, Long.MAX_VALUE));
            state.put("ratio", Double.NaN);
            state.put("flag", true);
            state.put("raw", new byte[] {0, (byte)0xff, 'a'});
            state.put("mask", torch.randn(7).gt(new org.bytedeco.pytorch.Scalar(0.0)));
            final Path file = dir.resolve("ckpt/a.pth.tar");
            io.write(file, state);

            final Map<String, Object> back = io.read(file);
            assertEquals(List.copyOf(state.keySet()), List.copyOf(back.keySet()));
            assertEquals(state.get("extremes"), back.get("extremes"));
            assertTrue(Double.isNaN((Double)back.get("ratio")));
            assertEquals(true, back.get("flag"));
            assertArrayEquals((byte[])state.get("raw"), (byte[])back.get("raw"));
            assertTrue(((Tensor)state.get("mask")).equal((Tensor)back.get("mask")));
            assertEquals(torch.ScalarType.Bool.value, ((Tensor)back.get("mask")).scalar_type().value);
            final Map<?, ?> model = (Map<?, ?>)back.get("model");
            assertTrue(weights.equal((Tensor)model.get("w")));
            assertTrue(ints.equal((Tensor)model.get("i")));
            assertEquals(torch.ScalarType.Long.value, ((Tensor)model.get("i")).scalar_type().value);
            assertTrue(doubles.equal((Tensor)model.get("d")));
            assertTrue(strided.equal((Tensor)model.get("t")), "a strided view saves its values");
            assertEquals(state.get("optimizer").toString(), back.get("optimizer").toString());
            assertEquals("dqn ✓", back.get("name"));
            assertEquals(null, back.get("nothing"));
            assertEquals(42L, back.get("last_iter"));
            try (java.util.stream.Stream<Path> files = Files.list(file.getParent()))
            {
                assertEquals(1, files.count(), "no temporary file is left beside the checkpoint");
            }
        }
    }

    @Test
    void shouldReadTheFixtureAsItsSidecarDescribesIt() throws IOException
    {
        final JsonNode sidecar = new ObjectMapper().readTree(FIXTURE.resolveSibling(FIXTURE.getFileName() + ".json")
            .toFile());
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = io.read(FIXTURE);
            assertEquals(List.of("model", "target_model", "optimizer", "last_iter", "last_step"),
                List.copyOf(state.keySet()));
            assertEquals(sidecar.get("last_iter").asLong(), state.get("last_iter"));
            assertEquals(sidecar.get("last_step").asLong(), state.get("last_step"));
            for (final String model : List.of("model", "target_model"))
            {
                final Map<?, ?> tensors = (Map<?, ?>)state.get(model);
                final JsonNode expected = sidecar.get(model);
                assertEquals(expected.size(), tensors.size(), model);
                expected.fields().forEachRemaining(e -> {
                    final Tensor t = (Tensor)tensors.get(e.getKey());
                    final String where = model + "." + e.getKey();
                    assertNotNull(t, where);
                    final long[] shape = new long[e.getValue().get("shape").size()];
                    for (int d = 0; d < shape.length; d++)
                    {
                        shape[d] = e.getValue().get("shape").get(d).asLong();
                    }
                    assertArrayEquals(shape, t.sizes().vec().get(), where);
                    assertEquals(torch.ScalarType.Float.value, t.scalar_type().value, where);
                    assertEquals(e.getValue().get("sum").asDouble(), t.sum().item_double(), 1e-5, where);
                    if (e.getValue().has("first"))
                    {
                        assertEquals(e.getValue().get("first").asDouble(), t.flatten().get(0).item_double(), 0.0,
                            where);
                    }
                });
            }
            final Map<?, ?> optimizer = (Map<?, ?>)state.get("optimizer");
            final List<?> groups = (List<?>)optimizer.get("param_groups");
            final JsonNode expectedGroup = sidecar.get("optimizer_param_groups").get(0);
            final Map<?, ?> group = (Map<?, ?>)groups.get(0);
            assertEquals(expectedGroup.size(), group.size());
            assertEquals(List.of(0.9, 0.999), group.get("betas"));
            assertThrows(UnsupportedOperationException.class, () -> ((List<Object>)group.get("betas")).add(1.0),
                "a Python tuple reads as an unmodifiable list");
            assertEquals(1e-3, group.get("lr"));
            assertEquals(1e-8, group.get("eps"));
            assertEquals(0L, group.get("weight_decay"));
            assertEquals(false, group.get("amsgrad"));
            assertTrue(group.containsKey("foreach") && null == group.get("foreach"));
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), group.get("params"));
            final Map<?, ?> perParam = (Map<?, ?>)optimizer.get("state");
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), List.copyOf(perParam.keySet()), "state is keyed by int");
            final Map<?, ?> first = (Map<?, ?>)perParam.get(0L);
            final List<String> keys = new java.util.ArrayList<>();
            first.keySet().forEach(k -> keys.add((String)k));
            java.util.Collections.sort(keys);
            final List<String> expectedKeys = new java.util.ArrayList<>();
            sidecar.get("optimizer_state_keys").forEach(k -> expectedKeys.add(k.asText()));
            assertEquals(expectedKeys, keys);
            assertEquals(5.0, ((Tensor)first.get("step")).item_double(), "PyTorch 1.13 keeps Adam's step as a tensor");
            assertArrayEquals(new long[] {64, 4}, ((Tensor)first.get("exp_avg")).sizes().vec().get());
        }
    }

    @Test
    void shouldFailCleanlyOnEveryKiBTruncationOfTheFixture() throws IOException
    {
        final byte[] good = Files.readAllBytes(FIXTURE);
        final Path bad = dir.resolve("truncated.pth.tar");
        for (int length = 0; length < good.length; length += 1024)
        {
            Files.write(bad, Arrays.copyOf(good, length));
            final int at = length;
            final CorruptCheckpointException ex = assertThrows(CorruptCheckpointException.class,
                () -> readAndFree(bad), "truncated to " + at);
            assertTrue(ex.getMessage().contains(bad.toString()), ex.getMessage());
        }
        assertThrows(NoSuchFileException.class, () -> io.read(dir.resolve("missing.pth.tar")));
    }

    @Test
    void shouldRejectEveryFlippedPickleByteAndNeverReturnGarbage() throws IOException
    {
        final Path file = dir.resolve("b.pth.tar");
        final Map<String, Object> original;
        try (PointerScope scope = new PointerScope())
        {
            torch.manual_seed(5);
            io.write(file, Map.of("w", torch.randn(64, 16), "last_iter", 5L, "groups", List.of(Map.of("lr", 0.1))));
            original = describe(io.read(file));
        }
        final byte[] good = Files.readAllBytes(file);
        final int[] pickle = PickleReaderTest.firstRecord(good);
        final int pickleStart = pickle[0];
        final int pickleLength = pickle[1];
        assertEquals(0, pickleStart % 64, "records are aligned as PyTorch aligns them");
        final Path bad = dir.resolve("bad.pth.tar");
        for (int at = 0; at < good.length; at++)
        {
            final byte[] flipped = good.clone();
            flipped[at] ^= 0x5a;
            Files.write(bad, flipped);
            final int where = at;
            if (at >= pickleStart && at < pickleStart + pickleLength)
            {
                assertThrows(CorruptCheckpointException.class, () -> readAndFree(bad), "pickle byte " + at);
                continue;
            }
            // Outside the records some zip fields are unused (padding, timestamps): a flip there may read back
            // fine, but then it must read back as the original.
            try (PointerScope scope = new PointerScope())
            {
                assertEquals(original, describe(io.read(bad)), "byte " + where + " flipped");
            }
            catch (final CorruptCheckpointException expected)
            {
                assertTrue(expected.getMessage().contains(bad.toString()));
            }
        }
        assertArrayEquals(good, Files.readAllBytes(file));
    }

    private void readAndFree(final Path file) throws IOException
    {
        try (PointerScope scope = new PointerScope())
        {
            io.read(file);
        }
    }

    /** A comparable picture of a tree: tensors as dtype, shape and values. */
    private static Map<String, Object> describe(final Map<String, Object> state)
    {
        final Map<String, Object> out = new java.util.TreeMap<>();
        state.forEach((k, v) -> out.put(k, v instanceof Tensor t
            ? t.scalar_type().value + Arrays.toString(t.sizes().vec().get()) + Arrays.toString(floats(t))
            : String.valueOf(v)));
        return out;
    }

    private static float[] floats(final Tensor t)
    {
        final Tensor flat = t.contiguous().to(torch.ScalarType.Float);
        final float[] values = new float[(int)flat.numel()];
        new org.bytedeco.javacpp.FloatPointer(flat.data_ptr()).capacity(values.length).get(values);
        return values;
    }

    @Test
    void shouldKeepTheOldFileWhenAWriteFails() throws IOException
    {
        final Path file = dir.resolve("c.pth.tar");
        io.write(file, Map.of("last_iter", 1L));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> io.write(file, Map.of("bad", new Object())));
        assertTrue(ex.getMessage().startsWith("checkpoint value bad: unsupported type java.lang.Object"));
        assertEquals(1L, io.read(file).get("last_iter"));
    }
}
