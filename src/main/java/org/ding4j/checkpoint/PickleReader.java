package org.ding4j.checkpoint;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A restricted unpickler for the {@code data.pkl} of a {@code torch.save} archive. It runs the pickle opcodes of
 * protocols 2 to 5 that {@code torch.save} and plain Python containers produce, and resolves only the globals a
 * checkpoint needs ({@code collections.OrderedDict}, {@code torch._utils._rebuild_tensor_v2} and
 * {@code _rebuild_parameter}, the {@code torch.*Storage} types, {@code _codecs.encode}); any other global is an
 * error, so a file can never make the reader run code, the same stance as {@code torch.load(weights_only=True)}.
 *
 * <p>Values map to Java as: dict and OrderedDict to {@link LinkedHashMap} (insertion order kept; an OrderedDict's
 * {@code _metadata} attribute is dropped), list to {@link ArrayList}, tuple to an unmodifiable {@link List}, int to
 * {@link Long}, float to {@link Double}, str to {@link String}, bytes to {@code byte[]}, bool, None to null, and a
 * tensor to a {@link TensorRef} that the caller turns into a tensor from the archive's storage records. Every read is
 * bounds-checked, so malformed input is a {@link PickleException}, never an exception of another kind.
 */
final class PickleReader
{
    /** Where a tensor's bytes live in the archive and how to view them. */
    record TensorRef(TorchDtypes dtype, String storageKey, long storageNumel, long offset, long[] size, long[] stride)
    {
    }

    /** Malformed or unsupported pickle data. */
    static final class PickleException extends Exception
    {
        private static final long serialVersionUID = 1L;

        PickleException(final String message)
        {
            super(message);
        }
    }

    /** The storage a BINPERSID opcode named: {@code ('storage', torch.XStorage, key, location, numel)}. */
    private record StorageRef(TorchDtypes dtype, String key, long numel)
    {
    }

    /** A resolved global; calling it is the REDUCE opcode. */
    private interface Callable
    {
        Object call(List<Object> args) throws PickleException;
    }

    /** A storage type such as {@code torch.FloatStorage}, named by its element type. */
    private record StorageType(TorchDtypes dtype)
    {
    }

    /** Keys of a mixed dict: a linear search each at worst, 1,000 of them take a millisecond. */
    private static final int MAX_MIXED_KEYS = 1_000;

    private final ByteBuffer in;
    private final ArrayList<Object> stack = new ArrayList<>();
    /** Stack heights at each MARK, Python's metastack. */
    private int[] marks = new int[16];
    private int markCount;
    private final Map<Long, Object> memo = new HashMap<>();
    /** The dicts whose keys mix kinds (str, int, float): they may hold at most {@link #MAX_MIXED_KEYS}. */
    private final java.util.Set<Map<Object, Object>> mixed =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    private PickleReader(final byte[] bytes)
    {
        this.in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Unpickles one value.
     *
     * @param bytes the pickle
     * @return the value, with tensors as {@link TensorRef}s
     * @throws PickleException if the data is malformed, truncated or uses what a checkpoint never needs
     */
    static Object load(final byte[] bytes) throws PickleException
    {
        try
        {
            return new PickleReader(bytes).run();
        }
        catch (final java.nio.BufferUnderflowException ex)
        {
            throw new PickleException("pickle ends early (truncated)");
        }
    }

    private Object run() throws PickleException
    {
        while (true)
        {
            final int position = in.position();
            final int op = in.get() & 0xff;
            switch (op)
            {
                case 0x80 -> protocol();
                case 0x95 -> in.getLong(); // FRAME: a length hint only
                case '.' -> {
                    final Object result = pop();
                    if (markCount != 0 || !stack.isEmpty())
                    {
                        throw new PickleException("STOP with values left on the stack");
                    }
                    return result;
                }
                case '(' -> pushMark();
                case '0' -> pop();
                case '1' -> popToMark();
                case '2' -> push(peek());
                case 'N' -> push(null);
                case 0x88 -> push(Boolean.TRUE);
                case 0x89 -> push(Boolean.FALSE);
                case 'K' -> push((long)(in.get() & 0xff));
                case 'M' -> push((long)(in.getShort() & 0xffff));
                case 'J' -> push((long)in.getInt());
                case 0x8a -> push(longOf(bytes(in.get() & 0xff)));
                case 0x8b -> push(longOf(bytes(length(in.getInt()))));
                case 'G' -> push(Double.longBitsToDouble(Long.reverseBytes(in.getLong()))); // big-endian
                case 'X' -> push(utf8(bytes(length(in.getInt()))));
                case 0x8c -> push(utf8(bytes(in.get() & 0xff)));
                case 0x8d -> push(utf8(bytes(length(in.getLong()))));
                case 'C' -> push(bytes(in.get() & 0xff));
                case 'B' -> push(bytes(length(in.getInt())));
                case 0x8e -> push(bytes(length(in.getLong())));
                case 'U' -> push(new String(bytes(in.get() & 0xff), StandardCharsets.ISO_8859_1));
                case 'T' -> push(new String(bytes(length(in.getInt())), StandardCharsets.ISO_8859_1));
                case '}' -> push(new LinkedHashMap<Object, Object>());
                case ']' -> push(new ArrayList<Object>());
                case ')' -> push(tuple(List.of()));
                case 'd' -> {
                    final List<Object> items = popToMark();
                    final LinkedHashMap<Object, Object> dict = new LinkedHashMap<>();
                    putAll(dict, items);
                    push(dict);
                }
                case 'l' -> push(new ArrayList<>(popToMark()));
                case 't' -> push(tuple(popToMark()));
                case 0x85 -> push(tuple(Collections.singletonList(pop()))); // TUPLE1, None included
                case 0x86 -> {
                    final Object b = pop();
                    push(tuple(Arrays.asList(pop(), b)));
                }
                case 0x87 -> {
                    final Object c = pop();
                    final Object b = pop();
                    push(tuple(Arrays.asList(pop(), b, c)));
                }
                case 'a' -> {
                    final Object value = pop();
                    listOf(peek(), "APPEND").add(value);
                }
                case 'e' -> {
                    final List<Object> items = popToMark();
                    listOf(peek(), "APPENDS").addAll(items);
                }
                case 's' -> {
                    final Object value = pop();
                    final Object key = pop();
                    putAll(dictOf(peek(), "SETITEM"), Arrays.asList(key, value));
                }
                case 'u' -> {
                    final List<Object> items = popToMark();
                    putAll(dictOf(peek(), "SETITEMS"), items);
                }
                case 'q' -> memo.put((long)(in.get() & 0xff), peek());
                case 'r' -> memo.put(in.getInt() & 0xffffffffL, peek());
                case 0x94 -> memo.put((long)memo.size(), peek());
                case 'h' -> push(memoGet(in.get() & 0xff));
                case 'j' -> push(memoGet(in.getInt() & 0xffffffffL));
                case 'c' -> push(global(line(), line()));
                case 0x93 -> {
                    final Object name = pop();
                    final Object module = pop();
                    if (!(module instanceof String m) || !(name instanceof String n))
                    {
                        throw new PickleException("STACK_GLOBAL needs two strings");
                    }
                    push(global(m, n));
                }
                case 'R' -> {
                    final Object args = pop();
                    final Object callable = pop();
                    if (!(callable instanceof Callable c) || !(args instanceof List<?> list))
                    {
                        throw new PickleException("REDUCE at byte " + position + " on a non-callable or without a "
                            + "tuple of arguments");
                    }
                    @SuppressWarnings("unchecked")
                    final List<Object> argList = (List<Object>)list;
                    push(c.call(argList));
                }
                case 0x81 -> {
                    final Object args = pop();
                    final Object cls = pop();
                    if (!(cls instanceof Callable c) || !(args instanceof List<?> list))
                    {
                        throw new PickleException("NEWOBJ at byte " + position + " on a non-class");
                    }
                    @SuppressWarnings("unchecked")
                    final List<Object> argList = (List<Object>)list;
                    push(c.call(argList));
                }
                case 'b' -> {
                    final Object state = pop();
                    // Only an OrderedDict's attribute dict (state_dict()._metadata) is BUILT in a checkpoint;
                    // the metadata is module version bookkeeping that ding4j does not use.
                    if (!(peek() instanceof Map<?, ?>) || !(state instanceof Map<?, ?>))
                    {
                        throw new PickleException("BUILD at byte " + position + " on an object ding4j cannot build");
                    }
                }
                case 'Q' -> push(persistent(pop()));
                default -> throw new PickleException("unsupported pickle opcode 0x" + Integer.toHexString(op)
                    + " at byte " + position);
            }
        }
    }

    private void protocol() throws PickleException
    {
        final int version = in.get() & 0xff;
        if (version < 2 || version > 5)
        {
            throw new PickleException("pickle protocol " + version + " (supported: 2 to 5)");
        }
    }

    private Object global(final String module, final String name) throws PickleException
    {
        final String qualified = module + "." + name;
        switch (qualified)
        {
            case "collections.OrderedDict":
                return (Callable)args -> {
                    if (!args.isEmpty())
                    {
                        throw new PickleException("OrderedDict() with arguments");
                    }
                    return new LinkedHashMap<>();
                };
            case "torch._utils._rebuild_tensor_v2":
                return (Callable)PickleReader::rebuildTensor;
            case "torch._utils._rebuild_parameter":
                return (Callable)args -> {
                    if (args.size() != 3 || !(args.get(0) instanceof TensorRef))
                    {
                        throw new PickleException("_rebuild_parameter(data, requires_grad, hooks) expected");
                    }
                    return args.get(0);
                };
            case "_codecs.encode":
                return (Callable)args -> {
                    if (args.size() != 2 || !(args.get(0) instanceof String text) || !"latin1".equals(args.get(1)))
                    {
                        throw new PickleException("_codecs.encode(str, 'latin1') expected");
                    }
                    return text.getBytes(StandardCharsets.ISO_8859_1);
                };
            default:
                if ("torch".equals(module) && null != TorchDtypes.byStorageName(name))
                {
                    return new StorageType(TorchDtypes.byStorageName(name));
                }
                throw new PickleException("global " + qualified + " is not allowed in a checkpoint");
        }
    }

    private static Object rebuildTensor(final List<Object> args) throws PickleException
    {
        // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
        if (args.size() < 6 || args.size() > 7 || !(args.get(0) instanceof StorageRef storage))
        {
            throw new PickleException("_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) "
                + "expected, got " + args.size() + " arguments");
        }
        final long offset = asLong(args.get(1), "storage_offset");
        final long[] size = longs(args.get(2), "size");
        final long[] stride = longs(args.get(3), "stride");
        if (size.length != stride.length)
        {
            throw new PickleException("tensor size " + Arrays.toString(size) + " and stride "
                + Arrays.toString(stride) + " differ in rank");
        }
        return new TensorRef(storage.dtype(), storage.key(), storage.numel(), offset, size, stride);
    }

    private Object persistent(final Object pid) throws PickleException
    {
        if (!(pid instanceof List<?> id) || id.size() != 5 || !"storage".equals(id.get(0))
            || !(id.get(1) instanceof StorageType type) || !(id.get(2) instanceof String key))
        {
            throw new PickleException("persistent id is not ('storage', torch.XStorage, key, location, numel)");
        }
        return new StorageRef(type.dtype(), key, asLong(id.get(4), "storage numel"));
    }

    private static long asLong(final Object value, final String what) throws PickleException
    {
        if (!(value instanceof Long l))
        {
            // Its kind only: a container's text can be cyclic or billions of characters long.
            throw new PickleException(what + " is not an int but a " + typeName(value));
        }
        return l;
    }

    private static long[] longs(final Object value, final String what) throws PickleException
    {
        if (!(value instanceof List<?> list))
        {
            throw new PickleException(what + " is not a tuple but a " + typeName(value));
        }
        final long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++)
        {
            out[i] = asLong(list.get(i), what);
        }
        return out;
    }

    private static List<Object> tuple(final List<Object> items)
    {
        return Collections.unmodifiableList(new ArrayList<>(items));
    }

    @SuppressWarnings("unchecked")
    private static List<Object> listOf(final Object target, final String op) throws PickleException
    {
        if (!(target instanceof ArrayList<?>))
        {
            throw new PickleException(op + " on a " + typeName(target) + ", not a list");
        }
        return (List<Object>)target;
    }

    @SuppressWarnings("unchecked")
    private static Map<Object, Object> dictOf(final Object target, final String op) throws PickleException
    {
        if (!(target instanceof LinkedHashMap<?, ?>))
        {
            throw new PickleException(op + " on a " + typeName(target) + ", not a dict");
        }
        return (Map<Object, Object>)target;
    }

    private void putAll(final Map<Object, Object> dict, final List<Object> items) throws PickleException
    {
        if (items.size() % 2 != 0)
        {
            throw new PickleException("odd number of items for a dict");
        }
        for (int i = 0; i < items.size(); i += 2)
        {
            final Object key = items.get(i);
            // Only immutable scalar keys: a list or dict key could be cyclic, and Python forbids them anyway.
            if (!(null == key || key instanceof String || key instanceof Long || key instanceof Double
                || key instanceof Boolean))
            {
                throw new PickleException("dict key of type " + typeName(key) + " is not supported");
            }
            final Object first = firstUnbounded(dict);
            if (null != first && (key instanceof String || key instanceof Long || key instanceof Double)
                && first.getClass() != key.getClass())
            {
                mixed.add(dict);
            }
            if (dict.size() >= MAX_MIXED_KEYS && mixed.contains(dict))
            {
                // Keys of two kinds that share a hash code are found by a linear search (neither orders the other):
                // a 2 MB dict of ints and floats crafted so took minutes. A checkpoint's dicts have keys of one kind.
                throw new PickleException("a dict whose keys mix kinds (" + typeName(firstUnbounded(dict)) + " and "
                    + "others) holds more than " + MAX_MIXED_KEYS + " keys");
            }
            dict.put(key, items.get(i + 1));
        }
    }

    /** @return the dict's first String, Long or Double key (found after at most None, True and False), or null */
    private static Object firstUnbounded(final Map<Object, Object> dict)
    {
        for (final Object key : dict.keySet())
        {
            if (null != key && !(key instanceof Boolean))
            {
                return key;
            }
        }
        return null;
    }

    /** @return the value's kind in Python's words ({@code list}, {@code tuple}, {@code int}, a storage) */
    static String typeName(final Object value)
    {
        if (null == value)
        {
            return "None";
        }
        if (value instanceof ArrayList<?>)
        {
            return "list";
        }
        if (value instanceof List<?>)
        {
            return "tuple";
        }
        final String[] names = {"dict", "str", "int", "float", "bool", "bytes", "tensor", "storage"};
        final Class<?>[] kinds = {Map.class, String.class, Long.class, Double.class, Boolean.class, byte[].class,
            TensorRef.class, StorageRef.class};
        for (int i = 0; i < kinds.length; i++)
        {
            if (kinds[i].isInstance(value))
            {
                return names[i];
            }
        }
        return "global";
    }

    private Object memoGet(final long index) throws PickleException
    {
        if (!memo.containsKey(index))
        {
            throw new PickleException("memo entry " + index + " was never stored");
        }
        return memo.get(index);
    }

    private int length(final long n) throws PickleException
    {
        if (n < 0 || n > in.remaining())
        {
            throw new PickleException("length " + n + " exceeds the " + in.remaining() + " bytes left");
        }
        return (int)n;
    }

    private byte[] bytes(final int n) throws PickleException
    {
        final byte[] out = new byte[length(n)];
        in.get(out);
        return out;
    }

    private static String utf8(final byte[] bytes) throws PickleException
    {
        try
        {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        }
        catch (final java.nio.charset.CharacterCodingException ex)
        {
            throw new PickleException("string is not valid UTF-8");
        }
    }

    private static Long longOf(final byte[] littleEndian) throws PickleException
    {
        if (0 == littleEndian.length)
        {
            return 0L;
        }
        final byte[] bigEndian = new byte[littleEndian.length];
        for (int i = 0; i < bigEndian.length; i++)
        {
            bigEndian[i] = littleEndian[littleEndian.length - 1 - i];
        }
        final BigInteger value = new BigInteger(bigEndian);
        if (value.bitLength() > 63)
        {
            throw new PickleException("int " + value + " does not fit in 64 bits");
        }
        return value.longValue();
    }

    private String line() throws PickleException
    {
        final int start = in.position();
        while (in.hasRemaining())
        {
            if ('\n' == in.get())
            {
                final byte[] text = Arrays.copyOfRange(in.array(), start, in.position() - 1);
                return new String(text, StandardCharsets.US_ASCII);
            }
        }
        throw new PickleException("GLOBAL name without a newline");
    }

    private void push(final Object value)
    {
        stack.add(value);
    }

    private Object peek() throws PickleException
    {
        if (stack.isEmpty() || (markCount > 0 && marks[markCount - 1] == stack.size()))
        {
            throw new PickleException("stack empty at byte " + in.position());
        }
        return stack.get(stack.size() - 1);
    }

    private Object pop() throws PickleException
    {
        final Object value = peek();
        stack.remove(stack.size() - 1);
        return value;
    }

    private void pushMark()
    {
        if (markCount == marks.length)
        {
            marks = Arrays.copyOf(marks, 2 * marks.length);
        }
        marks[markCount++] = stack.size();
    }

    private List<Object> popToMark() throws PickleException
    {
        if (0 == markCount)
        {
            throw new PickleException("no MARK on the stack at byte " + in.position());
        }
        final int from = marks[--markCount];
        final List<Object> top = stack.subList(from, stack.size());
        final List<Object> items = new ArrayList<>(top);
        top.clear();
        return items;
    }
}
