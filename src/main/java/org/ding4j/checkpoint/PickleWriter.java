package org.ding4j.checkpoint;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Tensor;

/**
 * Writes the {@code data.pkl} of a {@code torch.save} archive: pickle protocol 2, as {@code torch.save} itself
 * writes it, so PyTorch 1.13 and 2.x both read it, and 2.x with {@code weights_only=True} too (only
 * {@code torch._utils._rebuild_tensor_v2}, {@code collections.OrderedDict}, the {@code torch.*Storage} types and
 * {@code _codecs.encode} are referenced; 1.13's weights-only reader takes no floats, {@code BINFLOAT}, which an
 * optimizer's state always holds, in {@code torch.save}'s own files as in these). Maps become dicts, lists lists,
 * Long/Integer ints, Double/Float floats, and each tensor a {@code _rebuild_tensor_v2} call on a storage the
 * {@link StorageSink} names.
 */
final class PickleWriter
{
    /** Takes a tensor's bytes into the archive and says how the pickle refers to them. */
    interface StorageSink
    {
        /**
         * @param tensor a tensor of the tree; the sink stores a contiguous CPU copy of it
         * @param path   its key path, for error messages
         * @return the storage record's key, e.g. {@code "0"}
         */
        String add(Tensor tensor, String path);
    }

    /** Python's pickler batches SETITEMS/APPENDS by this many items; so does this one. */
    private static final int BATCH = 1000;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final StorageSink storages;

    private PickleWriter(final StorageSink storages)
    {
        this.storages = storages;
    }

    /**
     * Pickles one value.
     *
     * @param value    the tree
     * @param storages receives every tensor
     * @return the pickle bytes
     * @throws IllegalArgumentException naming the key path of a value that has no pickle form here
     */
    static byte[] write(final Object value, final StorageSink storages)
    {
        final PickleWriter writer = new PickleWriter(storages);
        writer.out.write(0x80);
        writer.out.write(2);
        writer.value(value, "");
        writer.out.write('.');
        return writer.out.toByteArray();
    }

    private void value(final Object value, final String path)
    {
        if (null == value)
        {
            out.write('N');
        }
        else if (value instanceof Boolean b)
        {
            out.write(b ? 0x88 : 0x89);
        }
        else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte)
        {
            integer(((Number)value).longValue());
        }
        else if (value instanceof Double || value instanceof Float)
        {
            out.write('G');
            final long bits = Double.doubleToRawLongBits(((Number)value).doubleValue());
            for (int shift = 56; shift >= 0; shift -= 8)
            {
                out.write((int)(bits >>> shift));
            }
        }
        else if (value instanceof String s)
        {
            string(s);
        }
        else if (value instanceof byte[] bytes)
        {
            // Protocol 2 has no bytes opcode; Python's own pickler writes _codecs.encode(latin-1 text, 'latin1').
            global("_codecs", "encode");
            string(new String(bytes, StandardCharsets.ISO_8859_1));
            string("latin1");
            out.write(0x86);
            out.write('R');
        }
        else if (value instanceof List<?> list)
        {
            out.write(']');
            for (int from = 0; from < list.size(); from += BATCH)
            {
                out.write('(');
                for (int i = from; i < Math.min(list.size(), from + BATCH); i++)
                {
                    value(list.get(i), path + "[" + i + "]");
                }
                out.write('e');
            }
        }
        else if (value instanceof Map<?, ?> map)
        {
            dict(map, path);
        }
        else if (value instanceof Tensor tensor)
        {
            tensor(tensor, path);
        }
        else
        {
            throw new IllegalArgumentException("checkpoint value " + path + ": unsupported type "
                + value.getClass().getName());
        }
    }

    private void dict(final Map<?, ?> map, final String path)
    {
        out.write('}');
        int inBatch = 0;
        for (final Map.Entry<?, ?> entry : map.entrySet())
        {
            final Object key = entry.getKey();
            if (!(key instanceof String || key instanceof Long || key instanceof Integer))
            {
                throw new IllegalArgumentException("checkpoint key " + path + "." + key
                    + ": keys must be strings or integers, got " + (null == key ? "null" : key.getClass().getName()));
            }
            if (0 == inBatch)
            {
                out.write('(');
            }
            value(key, path);
            value(entry.getValue(), path.isEmpty() ? String.valueOf(key) : path + "." + key);
            if (++inBatch == BATCH)
            {
                out.write('u');
                inBatch = 0;
            }
        }
        if (inBatch > 0)
        {
            out.write('u');
        }
    }

    private void tensor(final Tensor tensor, final String path)
    {
        final String key = storages.add(tensor, path);
        final int rank = (int)tensor.dim();
        global("torch._utils", "_rebuild_tensor_v2");
        out.write('(');
        out.write('(');
        string("storage");
        global("torch", TorchDtypes.byScalarType(tensor.scalar_type(), path).storageName());
        string(key);
        string("cpu");
        integer(tensor.numel());
        out.write('t');
        out.write('Q');
        integer(0);
        out.write('(');
        for (int d = 0; d < rank; d++)
        {
            integer(tensor.size(d));
        }
        out.write('t');
        // The sink stores a contiguous copy, so the strides are the contiguous ones whatever the tensor's own are.
        final long[] strides = new long[rank];
        long stride = 1;
        for (int d = rank - 1; d >= 0; d--)
        {
            strides[d] = stride;
            stride *= Math.max(1, tensor.size(d));
        }
        out.write('(');
        for (int d = 0; d < rank; d++)
        {
            integer(strides[d]);
        }
        out.write('t');
        out.write(0x89);
        global("collections", "OrderedDict");
        out.write(')');
        out.write('R');
        out.write('t');
        out.write('R');
    }

    private void global(final String module, final String name)
    {
        out.write('c');
        out.writeBytes((module + "\n" + name + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    private void string(final String s)
    {
        final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        out.write('X');
        littleEndianInt(utf8.length);
        out.writeBytes(utf8);
    }

    private void integer(final long v)
    {
        if (v >= 0 && v < 0x100)
        {
            out.write('K');
            out.write((int)v);
        }
        else if (v >= 0 && v < 0x10000)
        {
            out.write('M');
            out.write((int)v);
            out.write((int)(v >>> 8));
        }
        else if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE)
        {
            out.write('J');
            littleEndianInt((int)v);
        }
        else
        {
            // LONG1: two's complement, little-endian, 8 bytes always suffice for a Java long.
            out.write(0x8a);
            out.write(8);
            for (int shift = 0; shift < 64; shift += 8)
            {
                out.write((int)(v >>> shift));
            }
        }
    }

    private void littleEndianInt(final int v)
    {
        out.write(v);
        out.write(v >>> 8);
        out.write(v >>> 16);
        out.write(v >>> 24);
    }
}
