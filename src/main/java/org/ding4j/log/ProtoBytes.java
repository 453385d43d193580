package org.ding4j.log;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The few protobuf encodings a TensorBoard event needs (varints, fixed 32/64-bit values, length-delimited fields),
 * written into one growing, reused array: what protobuf-java's {@code CodedOutputStream} did for the writer, without
 * a dependency that clashes with a host's protobuf version. Field numbers and wire types as in protobuf's encoding
 * guide; the bytes are those {@code CodedOutputStream} writes (TensorBoard reads them back in
 * {@code TensorBoardInteropTest}). Not thread-safe: the writer thread's.
 */
final class ProtoBytes
{
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LENGTH_DELIMITED = 2;
    static final int FIXED32 = 5;

    /** The encoded bytes, {@link #size} of them. */
    byte[] bytes = new byte[1024];
    int size;

    /** Starts a new message in the same array. */
    void reset()
    {
        size = 0;
    }

    /** @return the bytes of a varint of {@code value} (unsigned: a negative int64 takes 10) */
    static int varintSize(final long value)
    {
        return value < 0 ? 10 : Math.max(1, (63 - Long.numberOfLeadingZeros(value)) / 7 + 1);
    }

    /** @return the bytes of field {@code field}'s tag */
    static int tagSize(final int field)
    {
        return varintSize((long)field << 3);
    }

    /** @return the bytes of a length-delimited field of {@code length} bytes */
    static int lengthDelimitedSize(final int field, final int length)
    {
        return tagSize(field) + varintSize(length) + length;
    }

    void tag(final int field, final int wireType)
    {
        varint(((long)field << 3) | wireType);
    }

    void varint(final long value)
    {
        ensure(10);
        long v = value;
        while ((v & ~0x7FL) != 0)
        {
            bytes[size++] = (byte)((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        bytes[size++] = (byte)v;
    }

    void fixed64(final long value)
    {
        ensure(Long.BYTES);
        for (int i = 0; i < Long.BYTES; i++)
        {
            bytes[size++] = (byte)(value >>> (8 * i));
        }
    }

    void fixed32(final int value)
    {
        ensure(Integer.BYTES);
        for (int i = 0; i < Integer.BYTES; i++)
        {
            bytes[size++] = (byte)(value >>> (8 * i));
        }
    }

    void writeDouble(final int field, final double value)
    {
        tag(field, FIXED64);
        fixed64(Double.doubleToRawLongBits(value));
    }

    void writeFloat(final int field, final float value)
    {
        tag(field, FIXED32);
        fixed32(Float.floatToRawIntBits(value));
    }

    void writeInt64(final int field, final long value)
    {
        tag(field, VARINT);
        varint(value);
    }

    /** Starts a length-delimited field whose {@code length} bytes the caller writes next. */
    void startLengthDelimited(final int field, final int length)
    {
        tag(field, LENGTH_DELIMITED);
        varint(length);
    }

    void writeBytes(final int field, final byte[] value, final int offset, final int length)
    {
        startLengthDelimited(field, length);
        ensure(length);
        System.arraycopy(value, offset, bytes, size, length);
        size += length;
    }

    void writeString(final int field, final String value)
    {
        final byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        writeBytes(field, utf8, 0, utf8.length);
    }

    private void ensure(final int more)
    {
        if (size + more > bytes.length)
        {
            bytes = Arrays.copyOf(bytes, Math.max(2 * bytes.length, size + more));
        }
    }
}
