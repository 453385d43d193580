package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The restricted unpickler alone, on bytes written by CPython's pickle and on damaged copies of the fixture. */
class PickleReaderTest
{
    /**
     * {@code pickle.dumps({'a': (1, -2, 2**40, -2**63, 300, 70000), 'b': [1.5, None, True, False, b'xy'],
     * 'c': 'é✓', 3: {}}, protocol=P)} by CPython 3.11, for P = 2 and 4 (5 writes the same bytes as 4 here).
     */
    private static final String PROTOCOL_2 = "80027d7100285801000000617101284b014afeffffff8a060000000000018a080000000000"
        + "0000804d2c014a7011010074710258010000006271035d710428473ff80000000000004e8889635f636f646563730a656e636f6465"
        + "0a710558020000007879710658060000006c6174696e31710786710852710965580100000063710a5805000000c3a9e29c93710b4b"
        + "037d710c752e";
    private static final String PROTOCOL_4 = "80049556000000000000007d94288c016194284b014afeffffff8a060000000000018a0800"
        + "000000000000804d2c014a7011010074948c0162945d9428473ff80000000000004e88894302787994658c0163948c05c3a9e29c9394"
        + "4b037d94752e";

    @Test
    void shouldReadWhatCPythonWritesInProtocols2And4() throws Exception
    {
        for (final String hex : List.of(PROTOCOL_2, PROTOCOL_4))
        {
            final Map<?, ?> value = (Map<?, ?>)PickleReader.load(HexFormat.of().parseHex(hex));
            assertEquals(List.of("a", "b", "c", 3L), List.copyOf(value.keySet()));
            assertEquals(List.of(1L, -2L, 1L << 40, Long.MIN_VALUE, 300L, 70000L), value.get("a"));
            final List<?> b = (List<?>)value.get("b");
            assertEquals(Arrays.asList(1.5, null, true, false), b.subList(0, 4));
            assertArrayEquals("xy".getBytes(StandardCharsets.US_ASCII), (byte[])b.get(4));
            assertEquals("é✓", value.get("c"));
            assertEquals(Map.of(), value.get(3L));
        }
    }

    @Test
    void shouldRefuseGlobalsACheckpointNeverNeeds()
    {
        final byte[] system = "\u0080\u0002cos\nsystem\nX\u0002\u0000\u0000\u0000ls\u0085R."
            .getBytes(StandardCharsets.ISO_8859_1);
        final PickleReader.PickleException ex = assertThrows(PickleReader.PickleException.class,
            () -> PickleReader.load(system));
        assertEquals("global os.system is not allowed in a checkpoint", ex.getMessage());
    }

    @Test
    void shouldFailCleanlyOnEveryTruncationAndFlipOfARealCheckpointPickle() throws IOException
    {
        final byte[] pickle = fixturePickle();
        for (int length = 0; length < pickle.length; length++)
        {
            final byte[] cut = Arrays.copyOf(pickle, length);
            assertThrows(PickleReader.PickleException.class, () -> PickleReader.load(cut), "cut at " + length);
        }
        int rejected = 0;
        for (int at = 0; at < pickle.length; at++)
        {
            for (final int mask : new int[] {0x01, 0x5a, 0xff})
            {
                final byte[] flipped = pickle.clone();
                flipped[at] ^= (byte)mask;
                try
                {
                    PickleReader.load(flipped);
                }
                catch (final PickleReader.PickleException expected)
                {
                    rejected++;
                }
            }
        }
        // A flip inside a string or a number yields another valid pickle; everything else must be refused, and
        // nothing may escape as any other exception (the loop above would fail the test).
        assertTrue(rejected > pickle.length, "only " + rejected + " of " + 3 * pickle.length + " flips rejected");
    }

    private static byte[] fixturePickle() throws IOException
    {
        final byte[] zip = Files.readAllBytes(Path.of(
            "src/test/resources/fixtures/checkpoints/dqn_cartpole_iteration_5.pth.tar"));
        final int[] record = firstRecord(zip);
        return Arrays.copyOfRange(zip, record[0], record[0] + record[1]);
    }

    /**
     * @param zip a zip archive without an archive comment whose first entry is stored
     * @return the first entry's data offset and length: the size from the central directory (PyTorch's writer may
     *     leave it out of the local header), the offset from the local header
     */
    static int[] firstRecord(final byte[] zip)
    {
        final ByteBuffer b = ByteBuffer.wrap(zip).order(ByteOrder.LITTLE_ENDIAN);
        final int directory = b.getInt(zip.length - 22 + 16);
        final int size = b.getInt(directory + 20);
        final int local = b.getInt(directory + 42);
        final int nameLength = b.getShort(local + 26) & 0xffff;
        final int extraLength = b.getShort(local + 28) & 0xffff;
        return new int[] {local + 30 + nameLength + extraLength, size};
    }
}
