package org.ding4j.checkpoint;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;

/**
 * Checkpoints in PyTorch's own {@code torch.save} format (the zip archive of {@code data.pkl}, one record per
 * tensor storage, {@code version}), read and written without Python: {@code .pth.tar} files from DI-engine load
 * here, and {@code torch.load} (PyTorch 1.13 and 2.x; with {@code weights_only=True} 2.x, whose weights-only reader,
 * unlike 1.13's, takes floats) reads what this writes.
 *
 * <p>Reading: the archive's zip structure is checked by {@link ZipFile}, every record's CRC-32 is verified, the
 * pickle runs through a restricted unpickler ({@link PickleReader}: no code runs, unknown globals are refused),
 * each storage record must have exactly its dtype's byte length and every tensor view must lie inside its storage.
 * Any violation is a {@link CorruptCheckpointException} naming the file. Tensors come back as CPU tensors; views of
 * one storage share it, as in PyTorch. Python tuples come back as unmodifiable lists, OrderedDicts as
 * {@link LinkedHashMap}s.
 *
 * <p>Writing: maps become dicts, lists lists, tensors contiguous CPU copies with their own storage record; the
 * archive is written through {@link AtomicFiles}, so a crash leaves the old file or the complete new one.
 */
public final class TorchCheckpointIO implements CheckpointIO
{
    /** The archive folder name inside the zip; PyTorch accepts any single top-level folder. */
    private static final String ARCHIVE = "archive";
    /** The zip format version {@code torch.save} writes (PyTorch 1.13 and 2.x). */
    private static final String FORMAT_VERSION = "3\n";
    private static final int MAX_DEPTH = 512;
    /**
     * data.pkl holds the structure only (tensors are records of their own): PyTorch's are KBs, rarely MBs. Its
     * reading takes up to ~50 bytes of heap per byte (a list opcode is one byte, an empty list object ~50), so the cap
     * keeps the worst file within a default heap.
     */
    private static final long MAX_PICKLE_BYTES = 16L << 20;

    @Override
    public void write(final Path file, final Map<String, Object> state) throws IOException
    {
        try (PointerScope scope = new PointerScope())
        {
            final List<Tensor> storages = new ArrayList<>();
            final byte[] pickle = PickleWriter.write(state, (tensor, path) -> {
                if (tensor.isNull() || !tensor.defined())
                {
                    throw new IllegalArgumentException("checkpoint value " + path + ": undefined tensor");
                }
                storages.add(tensor.detach().cpu().contiguous());
                return String.valueOf(storages.size() - 1);
            });
            AtomicFiles.write(file, out -> {
                final StoredZipWriter zip = new StoredZipWriter(out);
                zip.add(ARCHIVE + "/data.pkl", pickle);
                zip.add(ARCHIVE + "/byteorder", "little".getBytes(StandardCharsets.US_ASCII));
                for (int i = 0; i < storages.size(); i++)
                {
                    final Tensor t = storages.get(i);
                    final long nbytes = t.nbytes();
                    zip.add(ARCHIVE + "/data/" + i, new BytePointer(t.data_ptr()).capacity(nbytes), nbytes);
                }
                zip.add(ARCHIVE + "/version", FORMAT_VERSION.getBytes(StandardCharsets.US_ASCII));
                zip.finish();
            });
        }
    }

    @Override
    public Map<String, Object> read(final Path file) throws IOException
    {
        return open(file, Reader::read);
    }

    /**
     * Checks, without libtorch and without reading any tensor, that a file can be a checkpoint to read: a regular
     * file, a zip archive (not the legacy format) whose records lie in one folder and include a {@code data.pkl} that
     * reads as a dict within its bounds. What it holds (keys, shapes, the tensors' storages) is checked only by
     * {@link #read} and whoever loads the result. A program that will
     * resume from the file checks it before it makes anything of its own (a run's folder).
     *
     * @param file the checkpoint
     * @throws NoSuchFileException         if it does not exist
     * @throws CorruptCheckpointException naming the file and the fault otherwise
     * @throws IOException                 if it cannot be read
     */
    public static void checkArchive(final Path file) throws IOException
    {
        open(file, Reader::structure);
    }

    /** What is done with an opened archive. */
    private interface ReadStep<T>
    {
        T apply(Reader reader) throws IOException;
    }

    private static <T> T open(final Path file, final ReadStep<T> step) throws IOException
    {
        if (!Files.exists(file))
        {
            throw new NoSuchFileException(file.toString(), null, "checkpoint does not exist");
        }
        if (!Files.isRegularFile(file))
        {
            throw new CorruptCheckpointException(file, Files.isDirectory(file) ? "a folder, not a checkpoint file"
                : "not a regular file (a FIFO or device)");
        }
        refuseLegacyFormat(file);
        try (ZipFile zip = new ZipFile(file.toFile()))
        {
            return step.apply(new Reader(file, zip));
        }
        catch (final ZipException | EOFException ex)
        {
            // ZipFile reports a damaged end record or central directory as either of these.
            throw new CorruptCheckpointException(file, "not a readable zip archive (truncated or corrupted?): " + ex);
        }
        catch (final RuntimeException ex)
        {
            // Whatever the bytes, a caller sees one kind of error: the checks above should leave nothing to land here.
            throw new CorruptCheckpointException(file, "unreadable: " + ex);
        }
    }

    /** torch.save's format before PyTorch 1.6 is a bare pickle stream (0x80 = PROTO), not a zip archive. */
    private static void refuseLegacyFormat(final Path file) throws IOException
    {
        final byte[] head = new byte[2];
        // A FileInputStream, as ZipFile reads: a channel's stream would be closed by an interrupt of the reading
        // thread (an application cancelling a resuming run), and the resume would fail instead of stopping.
        try (InputStream in = new java.io.FileInputStream(file.toFile()))
        {
            if (2 == in.readNBytes(head, 0, 2) && (head[0] & 0xff) == 0x80)
            {
                throw new CorruptCheckpointException(file, "a legacy torch.save file (PyTorch < 1.6, or "
                    + "_use_new_zipfile_serialization=False) or a bare pickle; ding4j reads the zip format: re-save it "
                    + "with torch.save in PyTorch >= 1.6");
            }
        }
    }

    /** A value no checkpoint holds on its own, found while sizing: each level it passes prepends its key. */
    private static final class LoneValue extends Exception
    {
        private static final long serialVersionUID = 1L;
        private final StringBuilder path = new StringBuilder();

        LoneValue()
        {
            // Only its path matters: no stack trace.
            super(null, null, false, false);
        }

        LoneValue within(final String segment)
        {
            path.insert(0, segment);
            return this;
        }
    }

    /** One read of one archive: its records by name and the storages loaded so far. */
    private static final class Reader
    {
        private final Path file;
        private final ZipFile zip;
        private final Map<String, ZipEntry> records = new HashMap<>();
        private final Map<String, Tensor> storages = new HashMap<>();
        private final long fileSize;
        private String prefix;

        Reader(final Path file, final ZipFile zip) throws IOException
        {
            this.file = file;
            this.zip = zip;
            this.fileSize = Files.size(file);
        }

        /**
         * Indexes the records and reads data.pkl's structure, without libtorch: what {@link #checkArchive} checks.
         *
         * @return the saved dict, its tensors as the reader's references
         */
        Object structure() throws IOException
        {
            indexRecords();
            final String byteOrder = records.containsKey("byteorder")
                ? new String(record("byteorder", 16), StandardCharsets.US_ASCII).trim() : "little";
            if (!"little".equals(byteOrder))
            {
                throw corrupt("byte order '" + byteOrder + "' (only little-endian checkpoints are read)");
            }
            final Object root;
            final byte[] pickle = record("data.pkl", MAX_PICKLE_BYTES);
            try
            {
                root = PickleReader.load(pickle);
            }
            catch (final PickleReader.PickleException ex)
            {
                throw corrupt("data.pkl: " + ex.getMessage());
            }
            if (!(root instanceof Map<?, ?>))
            {
                throw corrupt("the saved object is a " + PickleReader.typeName(root) + ", not a dict");
            }
            // Work and memory stay bounded by the file: a pickle can share one subtree from many places through its
            // memo (1 KB can describe 2^40 paths), so the tree is sized before it is built, and each shared node is
            // built once and stays shared, as in PyTorch.
            final long limit = 4L * pickle.length + 10_000;
            final long values;
            try
            {
                values = expandedSize(root, new IdentityHashMap<>(), 0, limit);
            }
            catch (final LoneValue ex)
            {
                // A storage, a storage type or a class (OrderedDict) standing alone: torch.save never writes one.
                throw corrupt("a storage or an allowed global stands alone at " + (0 == ex.path.length() ? "the top"
                    : ex.path.toString()) + " (only inside a tensor's rebuild is one read)");
            }
            if (values > limit)
            {
                throw corrupt("data.pkl describes more than " + limit + " values through shared references ("
                    + pickle.length + " bytes)");
            }
            return root;
        }

        Map<String, Object> read() throws IOException
        {
            final Object root = structure();
            @SuppressWarnings("unchecked")
            final Map<String, Object> state = (Map<String, Object>)materialise(root, "", 0,
                Collections.newSetFromMap(new IdentityHashMap<>()), new IdentityHashMap<>());
            return state;
        }

        private void indexRecords() throws IOException
        {
            final Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements())
            {
                final ZipEntry entry = entries.nextElement();
                final String name = entry.getName();
                final int slash = name.indexOf('/');
                if (slash <= 0)
                {
                    throw corrupt("record '" + name + "' is not inside the archive folder");
                }
                if (null == prefix)
                {
                    prefix = name.substring(0, slash);
                }
                else if (!prefix.equals(name.substring(0, slash)))
                {
                    throw corrupt("records in two archive folders, '" + prefix + "' and '" + name + "'");
                }
                if (null != records.put(name.substring(slash + 1), entry))
                {
                    // PyTorch reads the first of two such records, java.util.zip another: refuse rather than guess.
                    throw corrupt("record '" + name + "' appears twice in the archive");
                }
            }
            if (!records.containsKey("data.pkl"))
            {
                throw corrupt("no data.pkl record (not a torch.save archive)");
            }
        }

        /** A record's bytes, CRC-checked. */
        private byte[] record(final String name, final long maxBytes) throws IOException
        {
            final ZipEntry entry = records.get(name);
            if (null == entry)
            {
                throw corrupt("record " + name + " is missing");
            }
            final long size = entry.getSize();
            if (size < 0 || size > maxBytes || size > fileSize)
            {
                throw corrupt("record " + name + " claims " + size + " bytes");
            }
            final byte[] bytes = new byte[(int)size];
            try (InputStream in = zip.getInputStream(entry))
            {
                final int n = in.readNBytes(bytes, 0, bytes.length);
                if (n != bytes.length || in.read() >= 0)
                {
                    throw corrupt("record " + name + " holds " + n + "+ bytes, its header says " + size);
                }
            }
            catch (final ZipException | EOFException ex)
            {
                throw corrupt("record " + name + " cannot be read (truncated?): " + ex);
            }
            final CRC32 crc = new CRC32();
            crc.update(bytes);
            if (crc.getValue() != entry.getCrc())
            {
                throw corrupt("record " + name + " fails its CRC-32 check (corrupted)");
            }
            return bytes;
        }

        /**
         * The number of values a walk of the tree visits, shared nodes counted once per path (saturating just past
         * the limit), computed once per node.
         */
        private long expandedSize(final Object value, final Map<Object, Long> sizes, final int depth,
            final long limit) throws CorruptCheckpointException, LoneValue
        {
            if (depth > MAX_DEPTH)
            {
                throw corrupt("nesting deeper than " + MAX_DEPTH + " levels");
            }
            if (!(value instanceof Map<?, ?>) && !(value instanceof List<?>))
            {
                if (!(null == value || value instanceof Boolean || value instanceof Long || value instanceof Double
                    || value instanceof String || value instanceof byte[] || value instanceof PickleReader.TensorRef))
                {
                    throw new LoneValue();
                }
                return 1;
            }
            final Long known = sizes.get(value);
            if (null != known)
            {
                return known;
            }
            // A container met again while its own size is being computed contains itself; materialise names it.
            sizes.put(value, 1L);
            long total = 1;
            if (value instanceof Map<?, ?> map)
            {
                for (final Map.Entry<?, ?> entry : map.entrySet())
                {
                    try
                    {
                        total = Math.min(limit + 1, total + expandedSize(entry.getValue(), sizes, depth + 1, limit));
                    }
                    catch (final LoneValue ex)
                    {
                        final boolean dot = ex.path.length() > 0 && '[' != ex.path.charAt(0);
                        throw ex.within(entry.getKey() + (dot ? "." : ""));
                    }
                }
            }
            else
            {
                final List<?> list = (List<?>)value;
                for (int i = 0; i < list.size(); i++)
                {
                    try
                    {
                        total = Math.min(limit + 1, total + expandedSize(list.get(i), sizes, depth + 1, limit));
                    }
                    catch (final LoneValue ex)
                    {
                        throw ex.within("[" + i + "]");
                    }
                }
            }
            sizes.put(value, total);
            return total;
        }

        private Object materialise(final Object value, final String path, final int depth,
            final Set<Object> containing, final Map<Object, Object> built) throws IOException
        {
            if (depth > MAX_DEPTH)
            {
                throw corrupt("nesting deeper than " + MAX_DEPTH + " levels at " + path);
            }
            final Object done = built.get(value);
            if (null != done)
            {
                return done;
            }
            final Object out = materialiseOnce(value, path, depth, containing, built);
            if (value instanceof PickleReader.TensorRef || value instanceof Map<?, ?> || value instanceof List<?>)
            {
                built.put(value, out);
            }
            return out;
        }

        private Object materialiseOnce(final Object value, final String path, final int depth,
            final Set<Object> containing, final Map<Object, Object> built) throws IOException
        {
            if (value instanceof PickleReader.TensorRef ref)
            {
                return tensor(ref, path);
            }
            if (value instanceof Map<?, ?> map)
            {
                enter(containing, map, path);
                final Map<Object, Object> out = new LinkedHashMap<>();
                for (final Map.Entry<?, ?> entry : map.entrySet())
                {
                    out.put(entry.getKey(), materialise(entry.getValue(), join(path, entry.getKey()), depth + 1,
                        containing, built));
                }
                containing.remove(map);
                return out;
            }
            if (value instanceof List<?> list)
            {
                enter(containing, list, path);
                final List<Object> out = new ArrayList<>(list.size());
                for (int i = 0; i < list.size(); i++)
                {
                    out.add(materialise(list.get(i), path + "[" + i + "]", depth + 1, containing, built));
                }
                containing.remove(list);
                // Tuples stay unmodifiable, lists stay lists: the reader's two list kinds survive the copy.
                return list instanceof ArrayList<?> ? out : Collections.unmodifiableList(out);
            }
            // A scalar (structure() refused anything else standing alone).
            return value;
        }

        private void enter(final Set<Object> containing, final Object container, final String path)
            throws CorruptCheckpointException
        {
            if (!containing.add(container))
            {
                throw corrupt("the saved object contains itself at " + path);
            }
        }

        private Tensor tensor(final PickleReader.TensorRef ref, final String path) throws IOException
        {
            final TorchDtypes dtype = ref.dtype();
            long last = ref.offset();
            long numel = 1;
            try
            {
                for (int d = 0; d < ref.size().length; d++)
                {
                    if (ref.size()[d] < 0 || ref.stride()[d] < 0)
                    {
                        throw new ArithmeticException("negative");
                    }
                    numel = Math.multiplyExact(numel, ref.size()[d]);
                    last = Math.addExact(last, Math.multiplyExact(Math.max(0, ref.size()[d] - 1), ref.stride()[d]));
                }
            }
            catch (final ArithmeticException ex)
            {
                throw corrupt("tensor " + path + " has size " + Arrays.toString(ref.size()) + " and stride "
                    + Arrays.toString(ref.stride()));
            }
            if (0 == numel)
            {
                return torch.empty(ref.size(), new TensorOptions(dtype.scalarType()), new MemoryFormatOptional());
            }
            // Checked before the storage is read: a view must lie inside its storage and may not show more elements
            // than the storage holds (a stride-0 view of 2^40 elements over one float would blow up every reader).
            if (ref.offset() < 0 || last >= ref.storageNumel())
            {
                throw corrupt("tensor " + path + " (offset " + ref.offset() + ", size " + Arrays.toString(ref.size())
                    + ", stride " + Arrays.toString(ref.stride()) + ") reaches past its storage of "
                    + ref.storageNumel() + " elements");
            }
            if (numel > ref.storageNumel())
            {
                throw corrupt("tensor " + path + " shows " + numel + " elements of a storage of "
                    + ref.storageNumel() + " (size " + Arrays.toString(ref.size()) + ", stride "
                    + Arrays.toString(ref.stride()) + "): overlapping views are not read");
            }
            final Tensor storage = storage(ref, dtype, path);
            return storage.as_strided(ref.size(), ref.stride(), new org.bytedeco.pytorch.LongOptional(ref.offset()));
        }

        private Tensor storage(final PickleReader.TensorRef ref, final TorchDtypes dtype, final String path)
            throws IOException
        {
            final Tensor cached = storages.get(ref.storageKey());
            if (null != cached)
            {
                if (cached.numel() != ref.storageNumel() || cached.scalar_type().value != dtype.scalarType().value)
                {
                    throw corrupt("storage " + ref.storageKey() + " is used with two types or sizes (at " + path
                        + ")");
                }
                return cached;
            }
            final long nbytes;
            try
            {
                nbytes = Math.multiplyExact(ref.storageNumel(), (long)dtype.elementBytes());
            }
            catch (final ArithmeticException ex)
            {
                throw corrupt("storage " + ref.storageKey() + " of " + ref.storageNumel() + " elements");
            }
            final String name = "data/" + ref.storageKey();
            final ZipEntry entry = records.get(name);
            if (null == entry || entry.getSize() != nbytes)
            {
                throw corrupt("record " + name + " for " + path + " should hold " + nbytes + " bytes ("
                    + ref.storageNumel() + " x " + dtype.pythonName() + "), "
                    + (null == entry ? "it is missing" : "it holds " + entry.getSize()));
            }
            if (nbytes > fileSize)
            {
                throw corrupt("record " + name + " claims " + nbytes + " bytes, more than the file's " + fileSize);
            }
            final Tensor storage;
            try
            {
                storage = torch.empty(new long[] {ref.storageNumel()}, new TensorOptions(dtype.scalarType()),
                    new MemoryFormatOptional());
            }
            catch (final RuntimeException ex)
            {
                // The record's size is checked against the file's by now: what fails here is memory, not the file,
                // which must not be called damaged (a user might delete a good checkpoint).
                throw new IOException("cannot read checkpoint " + file + ": its record " + name + " needs " + nbytes
                    + " bytes of memory, which could not be allocated: " + java.util.Objects.toString(ex.getMessage(),
                    ex.toString()).lines().findFirst().orElse(""), ex);
            }
            if (nbytes > 0)
            {
                readInto(name, entry, new BytePointer(storage.data_ptr()).capacity(nbytes), nbytes);
            }
            storages.put(ref.storageKey(), storage);
            return storage;
        }

        /** Streams a record straight into native memory (storages may pass 2 GiB), CRC-checked on the way. */
        private void readInto(final String name, final ZipEntry entry, final BytePointer target, final long nbytes)
            throws IOException
        {
            final byte[] chunk = new byte[(int)Math.min(nbytes, 1 << 20)];
            final CRC32 crc = new CRC32();
            long done = 0;
            try (InputStream in = zip.getInputStream(entry))
            {
                while (done < nbytes)
                {
                    final int n = in.readNBytes(chunk, 0, (int)Math.min(chunk.length, nbytes - done));
                    if (0 == n)
                    {
                        break;
                    }
                    crc.update(chunk, 0, n);
                    target.position(done).put(chunk, 0, n);
                    done += n;
                }
                if (done != nbytes || in.read() >= 0)
                {
                    throw corrupt("record " + name + " holds " + done + "+ bytes, its header says " + nbytes);
                }
            }
            catch (final ZipException | EOFException ex)
            {
                throw corrupt("record " + name + " cannot be read (truncated?): " + ex);
            }
            finally
            {
                target.position(0);
            }
            if (crc.getValue() != entry.getCrc())
            {
                throw corrupt("record " + name + " fails its CRC-32 check (corrupted)");
            }
        }

        private static String join(final String path, final Object key)
        {
            return path.isEmpty() ? String.valueOf(key) : path + "." + key;
        }

        private CorruptCheckpointException corrupt(final String reason)
        {
            return new CorruptCheckpointException(file, reason);
        }
    }
}
