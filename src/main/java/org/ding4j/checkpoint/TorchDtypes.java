package org.ding4j.checkpoint;

import org.bytedeco.pytorch.global.torch;

/**
 * The tensor element types a checkpoint may hold, with PyTorch's names for them: the dtype as Python prints it,
 * the legacy storage class {@code torch.save} pickles, and the element size that fixes a storage record's length.
 */
enum TorchDtypes
{
    FLOAT32("float32", torch.ScalarType.Float, "FloatStorage", 4),
    FLOAT64("float64", torch.ScalarType.Double, "DoubleStorage", 8),
    FLOAT16("float16", torch.ScalarType.Half, "HalfStorage", 2),
    BFLOAT16("bfloat16", torch.ScalarType.BFloat16, "BFloat16Storage", 2),
    INT64("int64", torch.ScalarType.Long, "LongStorage", 8),
    INT32("int32", torch.ScalarType.Int, "IntStorage", 4),
    INT16("int16", torch.ScalarType.Short, "ShortStorage", 2),
    INT8("int8", torch.ScalarType.Char, "CharStorage", 1),
    UINT8("uint8", torch.ScalarType.Byte, "ByteStorage", 1),
    BOOL("bool", torch.ScalarType.Bool, "BoolStorage", 1);

    private final String pythonName;
    private final torch.ScalarType scalarType;
    private final String storageName;
    private final int elementBytes;

    TorchDtypes(final String pythonName, final torch.ScalarType scalarType, final String storageName,
        final int elementBytes)
    {
        this.pythonName = pythonName;
        this.scalarType = scalarType;
        this.storageName = storageName;
        this.elementBytes = elementBytes;
    }

    String pythonName()
    {
        return pythonName;
    }

    torch.ScalarType scalarType()
    {
        return scalarType;
    }

    String storageName()
    {
        return storageName;
    }

    int elementBytes()
    {
        return elementBytes;
    }

    /** The dtype named by a storage class ({@code FloatStorage}), or null when a checkpoint may not hold it. */
    static TorchDtypes byStorageName(final String storageName)
    {
        for (final TorchDtypes dtype : values())
        {
            if (dtype.storageName.equals(storageName))
            {
                return dtype;
            }
        }
        return null;
    }

    /**
     * @param type a tensor's scalar type
     * @param path the tensor's key path, for the error
     * @return its dtype
     * @throws IllegalArgumentException if checkpoints do not carry that type (complex, quantized)
     */
    static TorchDtypes byScalarType(final torch.ScalarType type, final String path)
    {
        // JavaCPP enums are compared by value: the same native code can surface as distinct constants.
        for (final TorchDtypes dtype : values())
        {
            if (dtype.scalarType.value == type.value)
            {
                return dtype;
            }
        }
        throw new IllegalArgumentException("checkpoint value " + path + ": tensors of type " + type
            + " cannot be saved");
    }
}
