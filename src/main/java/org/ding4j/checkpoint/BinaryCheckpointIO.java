package org.ding4j.checkpoint;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;

/**
 * ding4j's own verified checkpoint format, the {@link CheckpointIO} the learner uses until the PyTorch-format
 * reader and writer land. Layout (big-endian):
 * <pre>
 *   0       8       12              20                     20+n
 *   +-------+-------+---------------+----------------------+--------+
 *   | magic | vers. | payload bytes | payload (one value)  | CRC32C |
 *   +-------+-------+---------------+----------------------+--------+
 * </pre>
 * A value is a tag byte and its body: null, boolean, long, double, string (u32 length + UTF-8), list (u32 count +
 * values), map (u32 count + key value pairs, keys strings or longs) or tensor (dtype code, rank, sizes, raw bytes of
 * a contiguous CPU copy). The length and the CRC are checked before anything is decoded, so a truncated or
 * corrupted file is a {@link CorruptCheckpointException}, never garbage.
 */
public final class BinaryCheckpointIO implements CheckpointIO
{
    private static final byte[] MAGIC = "D4JCKPT\0".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;
    private static final int HEADER_BYTES = MAGIC.length + Integer.BYTES + Long.BYTES;

    private static final byte NULL = 0;
    private static final byte BOOLEAN = 1;
    private static final byte LONG = 2;
    private static final byte DOUBLE = 3;
    private static final byte STRING = 4;
    private static final byte LIST = 5;
    private static final byte MAP = 6;
    private static final byte TENSOR = 7;

    @Override
    public void write(final Path file, final Map<String, Object> state) throws IOException
    {
        final ByteArrayOutputStream payloadBytes = new ByteArrayOutputStream();
        try (DataOutputStream payload = new DataOutputStream(payloadBytes);
            PointerScope scope = new PointerScope())
        {
            writeValue(payload, state, "");
        }
        final byte[] body = payloadBytes.toByteArray();
        final CRC32C crc = new CRC32C();
        crc.update(body);
        final ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + body.length + Integer.BYTES);
        out.put(MAGIC).putInt(VERSION).putLong(body.length).put(body).putInt((int)crc.getValue());
        AtomicFiles.write(file, out.array());
    }

    @Override
    public Map<String, Object> read(final Path file) throws IOException
    {
        final byte[] bytes;
        try
        {
            bytes = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            throw new NoSuchFileException(file.toString(), null, "checkpoint does not exist");
        }
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        if (bytes.length < HEADER_BYTES + Integer.BYTES)
        {
            throw new CorruptCheckpointException(file, "only " + bytes.length + " bytes");
        }
        final byte[] magic = new byte[MAGIC.length];
        in.get(magic);
        if (!java.util.Arrays.equals(MAGIC, magic))
        {
            throw new CorruptCheckpointException(file, "not a ding4j checkpoint (bad magic)");
        }
        final int version = in.getInt();
        if (VERSION != version)
        {
            throw new CorruptCheckpointException(file, "format version " + version + ", expected " + VERSION);
        }
        final long length = in.getLong();
        if (length != bytes.length - HEADER_BYTES - Integer.BYTES)
        {
            throw new CorruptCheckpointException(file, "payload of " + length + " bytes announced, "
                + (bytes.length - HEADER_BYTES - Integer.BYTES) + " present (truncated?)");
        }
        final CRC32C crc = new CRC32C();
        crc.update(bytes, HEADER_BYTES, (int)length);
        final int expected = ByteBuffer.wrap(bytes, HEADER_BYTES + (int)length, Integer.BYTES).getInt();
        if ((int)crc.getValue() != expected)
        {
            throw new CorruptCheckpointException(file, "CRC32C mismatch (corrupted)");
        }
        final ByteBuffer payload = ByteBuffer.wrap(bytes, HEADER_BYTES, (int)length).slice();
        try
        {
            final Object root = readValue(payload);
            if (!(root instanceof Map<?, ?> map) || payload.hasRemaining())
            {
                throw new CorruptCheckpointException(file, "payload is not one map");
            }
            @SuppressWarnings("unchecked")
            final Map<String, Object> state = (Map<String, Object>)map;
            return state;
        }
        catch (final BufferUnderflowException | IllegalArgumentException ex)
        {
            throw new CorruptCheckpointException(file, "malformed payload: " + ex);
        }
    }

    private static void writeValue(final DataOutputStream out, final Object value, final String path)
        throws IOException
    {
        if (null == value)
        {
            out.writeByte(NULL);
        }
        else if (value instanceof Boolean b)
        {
            out.writeByte(BOOLEAN);
            out.writeBoolean(b);
        }
        else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte)
        {
            out.writeByte(LONG);
            out.writeLong(((Number)value).longValue());
        }
        else if (value instanceof Double || value instanceof Float)
        {
            out.writeByte(DOUBLE);
            out.writeDouble(((Number)value).doubleValue());
        }
        else if (value instanceof String s)
        {
            out.writeByte(STRING);
            writeString(out, s);
        }
        else if (value instanceof List<?> list)
        {
            out.writeByte(LIST);
            out.writeInt(list.size());
            for (int i = 0; i < list.size(); i++)
            {
                writeValue(out, list.get(i), path + "[" + i + "]");
            }
        }
        else if (value instanceof Map<?, ?> map)
        {
            out.writeByte(MAP);
            out.writeInt(map.size());
            for (final Map.Entry<?, ?> entry : map.entrySet())
            {
                if (!(entry.getKey() instanceof String || entry.getKey() instanceof Long
                    || entry.getKey() instanceof Integer))
                {
                    throw new IllegalArgumentException("checkpoint key " + path + "." + entry.getKey()
                        + ": keys must be strings or integers, got " + entry.getKey().getClass().getSimpleName());
                }
                writeValue(out, entry.getKey(), path);
                writeValue(out, entry.getValue(), path.isEmpty() ? String.valueOf(entry.getKey())
                    : path + "." + entry.getKey());
            }
        }
        else if (value instanceof Tensor tensor)
        {
            writeTensor(out, tensor, path);
        }
        else
        {
            throw new IllegalArgumentException("checkpoint value " + path + ": unsupported type "
                + value.getClass().getName());
        }
    }

    private static void writeTensor(final DataOutputStream out, final Tensor tensor, final String path)
        throws IOException
    {
        if (tensor.isNull() || !tensor.defined())
        {
            throw new IllegalArgumentException("checkpoint value " + path + ": undefined tensor");
        }
        final Tensor cpu = tensor.is_cpu() ? tensor.detach().contiguous() : tensor.detach().cpu().contiguous();
        out.writeByte(TENSOR);
        out.writeByte(cpu.scalar_type().value);
        out.writeInt((int)cpu.dim());
        for (int d = 0; d < cpu.dim(); d++)
        {
            out.writeLong(cpu.size(d));
        }
        final long nbytes = cpu.nbytes();
        if (nbytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("checkpoint value " + path + ": tensor of " + nbytes
                + " bytes is over this format's 2 GiB limit");
        }
        final byte[] raw = new byte[(int)nbytes];
        if (nbytes > 0)
        {
            new BytePointer(cpu.data_ptr()).capacity(nbytes).get(raw);
        }
        out.writeLong(nbytes);
        out.write(raw);
    }

    private static Object readValue(final ByteBuffer in)
    {
        final byte tag = in.get();
        switch (tag)
        {
            case NULL:
                return null;
            case BOOLEAN:
                return 0 != in.get();
            case LONG:
                return in.getLong();
            case DOUBLE:
                return in.getDouble();
            case STRING:
                return readString(in);
            case LIST:
            {
                final int n = count(in);
                final List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++)
                {
                    list.add(readValue(in));
                }
                return list;
            }
            case MAP:
            {
                final int n = count(in);
                final Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++)
                {
                    final Object key = readValue(in);
                    map.put(key, readValue(in));
                }
                return map;
            }
            case TENSOR:
                return readTensor(in);
            default:
                throw new IllegalArgumentException("unknown value tag " + tag);
        }
    }

    private static Tensor readTensor(final ByteBuffer in)
    {
        final byte code = in.get();
        torch.ScalarType dtype = null;
        for (final torch.ScalarType type : torch.ScalarType.values())
        {
            if (type.value == code)
            {
                dtype = type;
            }
        }
        if (null == dtype)
        {
            throw new IllegalArgumentException("unknown dtype code " + code);
        }
        final int rank = count(in);
        final long[] shape = new long[rank];
        long numel = 1;
        for (int d = 0; d < rank; d++)
        {
            shape[d] = in.getLong();
            if (shape[d] < 0)
            {
                throw new IllegalArgumentException("negative tensor size " + shape[d]);
            }
            numel *= shape[d];
        }
        final long nbytes = in.getLong();
        if (nbytes < 0 || nbytes > in.remaining())
        {
            throw new IllegalArgumentException("tensor of " + nbytes + " bytes, " + in.remaining() + " left");
        }
        final byte[] raw = new byte[(int)nbytes];
        in.get(raw);
        final Tensor tensor = torch.empty(shape, new TensorOptions(dtype), new MemoryFormatOptional());
        if (tensor.nbytes() != nbytes || tensor.numel() != numel)
        {
            throw new IllegalArgumentException("tensor bytes " + nbytes + " do not fit shape "
                + java.util.Arrays.toString(shape) + " of " + dtype);
        }
        if (nbytes > 0)
        {
            new BytePointer(tensor.data_ptr()).capacity(nbytes).put(raw);
        }
        return tensor;
    }

    private static int count(final ByteBuffer in)
    {
        final int n = in.getInt();
        if (n < 0 || n > in.remaining())
        {
            throw new IllegalArgumentException("count " + n + " exceeds the " + in.remaining() + " bytes left");
        }
        return n;
    }

    private static void writeString(final DataOutputStream out, final String s) throws IOException
    {
        final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    private static String readString(final ByteBuffer in)
    {
        final byte[] utf8 = new byte[count(in)];
        in.get(utf8);
        return new String(utf8, StandardCharsets.UTF_8);
    }
}
