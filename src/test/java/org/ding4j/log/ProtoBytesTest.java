package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.SplittableRandom;

import com.google.protobuf.CodedOutputStream;
import org.junit.jupiter.api.Test;

/** ding4j's own protobuf encodings write the bytes protobuf-java's CodedOutputStream writes, sizes included. */
class ProtoBytesTest
{
    @Test
    void shouldWriteWhatCodedOutputStreamWrites() throws IOException
    {
        final SplittableRandom random = new SplittableRandom(3);
        final ProtoBytes ours = new ProtoBytes();
        for (int round = 0; round < 200; round++)
        {
            final ByteArrayOutputStream theirsBytes = new ByteArrayOutputStream();
            final CodedOutputStream theirs = CodedOutputStream.newInstance(theirsBytes);
            ours.reset();
            final int field = 1 + random.nextInt(2000);
            final long int64 = 0 == round % 3 ? -random.nextLong(1L << 62) : random.nextLong(1L << (round % 62 + 1));
            final double real = random.nextDouble(-1e6, 1e6);
            final byte[] text = new byte[random.nextInt(300)];
            random.nextBytes(text);
            ours.writeInt64(field, int64);
            theirs.writeInt64(field, int64);
            ours.writeDouble(field, real);
            theirs.writeDouble(field, real);
            ours.writeFloat(field, (float)real);
            theirs.writeFloat(field, (float)real);
            ours.writeBytes(field, text, 0, text.length);
            theirs.writeByteArray(field, text, 0, text.length);
            ours.writeString(field, "brain.Event:2");
            theirs.writeString(field, "brain.Event:2");
            theirs.flush();
            assertArrayEquals(theirsBytes.toByteArray(), Arrays.copyOf(ours.bytes, ours.size), "round " + round);
            assertEquals(CodedOutputStream.computeInt64SizeNoTag(int64), ProtoBytes.varintSize(int64));
            assertEquals(CodedOutputStream.computeTagSize(field), ProtoBytes.tagSize(field));
            assertEquals(CodedOutputStream.computeByteArraySize(field, text), ProtoBytes.lengthDelimitedSize(field,
                text.length));
        }
    }
}
