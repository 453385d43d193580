package org.ding4j.checkpoint;

import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * A checkpoint tree as JSON, for {@code ding4j checkpoint inspect}: maps become objects (keys as strings), lists
 * arrays, plain values stay as they are, and each tensor becomes {@code {"path", "dtype", "shape", "sum",
 * "first"}} with the sum accumulated in double and the first element in storage order (null when empty). The
 * same description the interop tests compare against PyTorch's.
 */
public final class CheckpointInspector
{
    private CheckpointInspector()
    {
    }

    /**
     * @param state a tree as {@link CheckpointIO#read} returns it
     * @return its JSON description
     */
    public static JsonNode describe(final Map<String, Object> state)
    {
        try (PointerScope scope = new PointerScope())
        {
            return node(state, "", new HashMap<>());
        }
    }

    /**
     * What makes two tensors the same to describe: where their first element lies, their dtype, shape and strides.
     * A file may rebuild one view of one storage from many paths, as many tensor objects (a crafted one did so
     * 700,000 times, each a sum over the whole storage).
     */
    private record View(long address, int dtype, List<Long> shape, List<Long> strides)
    {
        static View of(final Tensor t)
        {
            final long address = 0 == t.numel() ? 0 : t.data_ptr().address();
            return new View(address, t.scalar_type().value, boxed(t.sizes().vec().get()),
                boxed(t.strides().vec().get()));
        }

        private static List<Long> boxed(final long[] values)
        {
            return java.util.Arrays.stream(values).boxed().toList();
        }
    }

    /**
     * @param seen each view's description, computed once: a checkpoint may reference one tensor from many paths
     *             (the reader bounds how many), and its sum is read once
     */
    private static JsonNode node(final Object value, final String path, final Map<View, ObjectNode> seen)
    {
        final JsonNodeFactory json = JsonNodeFactory.instance;
        if (null == value)
        {
            return json.nullNode();
        }
        if (value instanceof Tensor t)
        {
            final View view;
            try (PointerScope scope = new PointerScope())
            {
                // Its native temporaries go with it: a file may reference thousands of tensors.
                view = View.of(t);
            }
            final ObjectNode described = seen.computeIfAbsent(view, k -> tensor(t, path)).deepCopy();
            return described.put("path", path);
        }
        if (value instanceof Map<?, ?> map)
        {
            final ObjectNode object = json.objectNode();
            map.forEach((k, v) -> object.set(String.valueOf(k), node(v, path.isEmpty() ? String.valueOf(k)
                : path + "." + k, seen)));
            return object;
        }
        if (value instanceof List<?> list)
        {
            final ArrayNode array = json.arrayNode();
            for (int i = 0; i < list.size(); i++)
            {
                array.add(node(list.get(i), path + "[" + i + "]", seen));
            }
            return array;
        }
        if (value instanceof Boolean b)
        {
            return json.booleanNode(b);
        }
        if (value instanceof Long l)
        {
            return json.numberNode(l);
        }
        if (value instanceof Double d)
        {
            return json.numberNode(d);
        }
        if (value instanceof byte[] bytes)
        {
            return json.objectNode().put("bytes_base64", Base64.getEncoder().encodeToString(bytes));
        }
        return json.textNode(String.valueOf(value));
    }

    private static ObjectNode tensor(final Tensor t, final String firstPath)
    {
        // The temporaries of one description go with it: thousands of tensors must not hold theirs to the end.
        try (PointerScope scope = new PointerScope())
        {
            return describeTensor(t, firstPath);
        }
    }

    private static ObjectNode describeTensor(final Tensor t, final String firstPath)
    {
        final ObjectNode node = JsonNodeFactory.instance.objectNode();
        final TorchDtypes dtype = TorchDtypes.byScalarType(t.scalar_type(), firstPath);
        // "path" first, as each reference's copy fills it in.
        node.putNull("path");
        node.put("dtype", dtype.pythonName());
        final ArrayNode shape = node.putArray("shape");
        for (int d = 0; d < t.dim(); d++)
        {
            shape.add(t.size(d));
        }
        final Tensor flat = t.reshape(-1);
        node.put("sum", flat.to(torch.ScalarType.Double).sum().item_double());
        if (0 == flat.numel())
        {
            node.putNull("first");
        }
        else if (TorchDtypes.BOOL == dtype)
        {
            node.put("first", flat.get(0).item_bool());
        }
        else if (flat.is_floating_point())
        {
            node.put("first", flat.get(0).to(torch.ScalarType.Double).item_double());
        }
        else
        {
            node.put("first", flat.get(0).to(torch.ScalarType.Long).item_long());
        }
        return node;
    }
}
