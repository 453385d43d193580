package org.ding4j.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.torch.Natives;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hand-made torch.save archives an attacker (or a bug) could write: each is refused with a
 * {@link CorruptCheckpointException} in bounded time and memory, before any large allocation; and legitimate pickles
 * that once failed (a tuple holding None, one tensor shared by many keys) load, the shared tensor once.
 */
class HostileCheckpointTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void natives()
    {
        Natives.load();
    }

    /** Pickle opcodes, written by hand as torch.save's protocol 2 writes them. */
    private static final class Pickle
    {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Pickle op(final int... bytes)
        {
            for (final int b : bytes)
            {
                out.write(b);
            }
            return this;
        }

        Pickle str(final String s)
        {
            final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            op('X', utf8.length, 0, 0, 0);
            out.writeBytes(utf8);
            return this;
        }

        Pickle global(final String module, final String name)
        {
            op('c');
            out.writeBytes((module + "\n" + name + "\n").getBytes(StandardCharsets.US_ASCII));
            return this;
        }

        Pickle binint(final int v)
        {
            return op('J', v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
        }

        /** Pushes _rebuild_tensor_v2 of float storage "0" ({@code numel} elements) with one dimension. */
        Pickle tensor(final int numel, final int size, final int stride)
        {
            global("torch._utils", "_rebuild_tensor_v2").op('(');
            op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").binint(numel).op('t', 'Q');
            binint(0).op('(').binint(size).op('t').op('(').binint(stride).op('t').op(0x89);
            return global("collections", "OrderedDict").op(')', 'R').op('t', 'R');
        }

        byte[] bytes()
        {
            return out.toByteArray();
        }
    }

    private Path archive(final String name, final byte[] pickle, final int storageFloats, final boolean twice)
        throws IOException
    {
        final Path file = dir.resolve(name);
        AtomicFiles.write(file, out -> {
            final StoredZipWriter zip = new StoredZipWriter(out);
            zip.add("archive/data.pkl", pickle);
            if (twice)
            {
                zip.add("archive/data.pkl", new Pickle().op(0x80, 2, '}', '.').bytes());
            }
            if (storageFloats > 0)
            {
                zip.add("archive/data/0", new byte[4 * storageFloats]);
            }
            zip.add("archive/version", "3".getBytes(StandardCharsets.US_ASCII));
            zip.finish();
        });
        return file;
    }

    private static String refused(final Path file)
    {
        return assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(CorruptCheckpointException.class,
            () -> {
                try (PointerScope scope = new PointerScope())
                {
                    new TorchCheckpointIO().read(file);
                }
            })).getMessage();
    }

    /**
     * What a hostile tester's 1-3 KB files did: an offset that is a cyclic list (its text recursed until the stack
     * overflowed), a dict whose int and float keys share one hash code (read in quadratic time), a storage standing
     * alone (printed as a Java object): each a CorruptCheckpointException naming it.
     */
    @Test
    void shouldRefuseCyclicFieldsMixedKeyKindsAndALoneStorage() throws IOException
    {
        // L = [M], M = [L], given as _rebuild_tensor_v2's storage offset.
        final Pickle cyclic = new Pickle().op(0x80, 2, '}').str("t").global("torch._utils", "_rebuild_tensor_v2")
            .op('(').op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").binint(1).op('t', 'Q');
        cyclic.op(']', 'q', 1, ']', 'q', 2, 'h', 1, 'a', 'a');
        cyclic.op('(').binint(1).op('t').op('(').binint(1).op('t').op(0x89);
        cyclic.global("collections", "OrderedDict").op(')', 'R').op('t', 'R', 's', '.');
        assertEquals("checkpoint " + dir.resolve("cyclic.pth.tar") + " is unusable: data.pkl: storage_offset is not an "
            + "int but a list", refused(archive("cyclic.pth.tar", cyclic.bytes(), 1, false)));
        // {0: None, 0.0: None, 1: None, ..., 1000: None}: an int and a float key (equal in Python, two kinds in Java)
        // and more ints; up to 1,000 keys such a dict is read (a few mixed keys are plain Python).
        final Pickle mixed = new Pickle().op(0x80, 2, '}', '(').binint(0).op('N', 'G', 0, 0, 0, 0, 0, 0, 0, 0, 'N');
        for (int k = 1; k <= 1000; k++)
        {
            mixed.binint(k).op('N');
        }
        assertTrue(refused(archive("mixed.pth.tar", mixed.op('u', '.').bytes(), 0, false)).endsWith("data.pkl: a "
            + "dict whose keys mix kinds (int and others) holds more than 1000 keys"));
        final Pickle alone = new Pickle().op(0x80, 2, '}').str("s").op('(').str("storage")
            .global("torch", "FloatStorage").str("0").str("cpu").binint(1).op('t', 'Q', 's', '.');
        assertTrue(refused(archive("alone.pth.tar", alone.bytes(), 1, false)).endsWith("a storage or an allowed global "
            + "stands alone at s (only inside a tensor's rebuild is one read)"));
    }

    @Test
    void shouldRefuseAMemoDagThatExpandsToTwoToTheFortyValues() throws IOException
    {
        // Level i is a list of two references to level i - 1 (through the memo): 40 levels in a few hundred bytes.
        final Pickle p = new Pickle().op(0x80, 2, '}').str("x").op(']', 'q', 0, '0');
        for (int level = 1; level <= 40; level++)
        {
            p.op('(', 'h', level - 1, 'h', level - 1, 'l', 'q', level, '0');
        }
        final byte[] pickle = p.op('h', 40, 's', '.').bytes();
        final String message = refused(archive("laughs.pth.tar", pickle, 0, false));
        assertTrue(message.contains("through shared references"), message);
        assertTrue(pickle.length < 1000, "a small file: " + pickle.length);
    }

    @Test
    void shouldRefuseAViewShowingMoreElementsThanItsStorageBeforeReadingIt() throws IOException
    {
        final byte[] stride0 = new Pickle().op(0x80, 2, '}').str("w").tensor(1, 1 << 28, 0).op('s', '.').bytes();
        final String message = refused(archive("stride0.pth.tar", stride0, 1, false));
        assertTrue(message.contains("shows 268435456 elements of a storage of 1"), message);
        final byte[] past = new Pickle().op(0x80, 2, '}').str("w").tensor(4, 5, 1).op('s', '.').bytes();
        assertTrue(refused(archive("past.pth.tar", past, 4, false)).contains("reaches past its storage"));
    }

    @Test
    void shouldLoadOneTensorSharedByManyKeysOnceAndATupleHoldingNone() throws IOException
    {
        final Pickle p = new Pickle().op(0x80, 2, '}').str("model").op('}').str("w").tensor(3, 3, 1).op('q', 1, 's');
        for (int i = 0; i < 1000; i++)
        {
            p.str("tied_" + i).op('h', 1, 's');
        }
        p.op('s').str("extra").op('N', 0x85, 's', '.');
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new TorchCheckpointIO().read(archive("shared.pth.tar", p.bytes(), 3,
                false));
            final Map<?, ?> model = (Map<?, ?>)state.get("model");
            assertEquals(1001, model.size());
            final Tensor w = (Tensor)model.get("w");
            assertSame(w, model.get("tied_999"), "a shared tensor is read once and stays shared, as in PyTorch");
            assertEquals(Arrays.asList((Object)null), state.get("extra"), "torch.save({'extra': (None,)})");
            final float[] values = new float[3];
            new org.bytedeco.javacpp.FloatPointer(w.data_ptr()).get(values);
            assertArrayEquals(new float[3], values);
        }
    }

    @Test
    void theArchiveCheckShouldRefuseWhatCannotBeACheckpointWithoutReadingIt() throws Exception
    {
        final byte[] ok = new Pickle().op(0x80, 2, '}', '.').bytes();
        TorchCheckpointIO.checkArchive(archive("ok.pth.tar", ok, 0, false));
        assertTrue(checked(archive("twice.pth.tar", ok, 0, true)).contains("appears twice"));
        assertTrue(checked(Files.writeString(dir.resolve("log.txt"), "not a checkpoint\n"))
            .contains("not a readable zip archive"));
        final Path noPickle = dir.resolve("no_pickle.pth.tar");
        AtomicFiles.write(noPickle, out -> {
            final StoredZipWriter zip = new StoredZipWriter(out);
            zip.add("archive/version", "3".getBytes(StandardCharsets.US_ASCII));
            zip.finish();
        });
        assertTrue(checked(noPickle).contains("no data.pkl record"));
        assertThrows(NoSuchFileException.class, () -> TorchCheckpointIO.checkArchive(dir.resolve("nowhere.pth.tar")));
        // data.pkl's structure too (a resume refuses such a file before it makes its folder): a list, a lone storage
        // deep inside (named by its path), a tensor whose offset is no int.
        assertTrue(checked(archive("list.pth.tar", new Pickle().op(0x80, 2, ']', '.').bytes(), 0, false))
            .endsWith("the saved object is a list, not a dict"));
        final Pickle deep = new Pickle().op(0x80, 2, '}').str("a").op('}').str("b").op(']').op('(').str("storage")
            .global("torch", "FloatStorage").str("0").str("cpu").binint(1).op('t', 'Q', 'a', 's', 's', '.');
        assertTrue(checked(archive("deep.pth.tar", deep.bytes(), 1, false)).endsWith("stands alone at a.b[0] (only "
            + "inside a tensor's rebuild is one read)"));
        final Pickle offset = new Pickle().op(0x80, 2, '}').str("t").global("torch._utils", "_rebuild_tensor_v2")
            .op('(').op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").binint(1).op('t', 'Q');
        offset.str("zero").op('(').binint(1).op('t').op('(').binint(1).op('t').op(0x89);
        offset.global("collections", "OrderedDict").op(')', 'R').op('t', 'R', 's', '.');
        assertTrue(checked(archive("offset.pth.tar", offset.bytes(), 1, false)).endsWith("storage_offset is not an "
            + "int but a str"));
    }

    private static String checked(final Path file)
    {
        return assertThrows(CorruptCheckpointException.class, () -> TorchCheckpointIO.checkArchive(file)).getMessage();
    }

    @Test
    void shouldRefuseTwoDataRecordsALegacyFileAndNonFiles() throws Exception
    {
        final byte[] ok = new Pickle().op(0x80, 2, '}', '.').bytes();
        assertTrue(refused(archive("twice.pth.tar", ok, 0, true)).contains("appears twice"));
        final Path legacy = dir.resolve("legacy.pt");
        // torch.save(..., _use_new_zipfile_serialization=False) starts with a pickled magic number.
        Files.write(legacy, new byte[] {(byte)0x80, 2, (byte)0x8a, 10, 0x6c, (byte)0xfc, (byte)0x9c, 0x46});
        assertTrue(refused(legacy).contains("a legacy torch.save file"));
        final Path folder = Files.createDirectory(dir.resolve("folder.pth.tar"));
        assertTrue(refused(folder).contains("a folder, not a checkpoint file"));
        final Path fifo = dir.resolve("fifo.pth.tar");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        assertTrue(refused(fifo).contains("not a regular file"), "no hang on a FIFO");
    }
}
