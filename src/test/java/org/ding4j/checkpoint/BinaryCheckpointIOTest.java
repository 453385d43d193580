package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("native")
class BinaryCheckpointIOTest
{
    private final BinaryCheckpointIO io = new BinaryCheckpointIO();

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
            final Path file = dir.resolve("ckpt/a.pth.tar");
            io.write(file, state);

            final Map<String, Object> back = io.read(file);
            assertEquals(List.of("model", "optimizer", "name", "nothing", "last_iter"), List.copyOf(back.keySet()));
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
    void shouldDetectEveryTruncationAndFlippedByteWithACleanError() throws IOException
    {
        final Path file = dir.resolve("b.pth.tar");
        try (PointerScope scope = new PointerScope())
        {
            io.write(file, Map.of("w", torch.randn(64, 16), "last_iter", 5L));
        }
        final byte[] good = Files.readAllBytes(file);
        final Path bad = dir.resolve("bad.pth.tar");
        for (int length = 0; length < good.length; length += Math.max(1, good.length / 97))
        {
            Files.write(bad, Arrays.copyOf(good, length));
            final IOException ex = assertThrows(IOException.class, () -> io.read(bad), "truncated to " + length);
            assertTrue(ex.getMessage().contains(bad.toString()), ex.getMessage());
        }
        for (int at = 0; at < good.length; at += Math.max(1, good.length / 211))
        {
            final byte[] flipped = good.clone();
            flipped[at] ^= 0x5a;
            Files.write(bad, flipped);
            assertThrows(CorruptCheckpointException.class, () -> io.read(bad), "byte " + at + " flipped");
        }
        assertThrows(NoSuchFileException.class, () -> io.read(dir.resolve("missing.pth.tar")));
        assertArrayEquals(good, Files.readAllBytes(file));
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
