package org.ding4j.checkpoint;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

import org.bytedeco.javacpp.BytePointer;

/**
 * Writes a zip archive of uncompressed ("stored") entries the way PyTorch's {@code PyTorchStreamWriter} does:
 * every entry's data starts on a 64-byte boundary (padding goes in an {@code FB} extra field), so a reader may map
 * tensor records straight from the file. Entries are written in the order added, then the central directory.
 * Archives over 4 GiB (which need ZIP64) are refused.
 */
final class StoredZipWriter
{
    private static final int ALIGNMENT = 64;
    private static final int LOCAL_HEADER_BYTES = 30;
    private static final int EXTRA_HEADER_BYTES = 4;
    private static final int DOS_DATE_1980_01_01 = (1 << 5) | 1;
    private static final long MAX_ZIP32 = 0xffffffffL;
    private static final int CHUNK = 1 << 16;

    private final OutputStream out;
    private final ByteArrayOutputStream centralDirectory = new ByteArrayOutputStream();
    private final byte[] chunk = new byte[CHUNK];
    private long position;
    private int entries;

    StoredZipWriter(final OutputStream out)
    {
        this.out = out;
    }

    /** Adds an entry from a Java array. */
    void add(final String name, final byte[] bytes) throws IOException
    {
        final CRC32 crc = new CRC32();
        crc.update(bytes);
        header(name, bytes.length, crc.getValue());
        out.write(bytes);
        position += bytes.length;
    }

    /** Adds an entry from native memory, copied through a small buffer (twice: once for the CRC, once to write). */
    void add(final String name, final BytePointer data, final long nbytes) throws IOException
    {
        final CRC32 crc = new CRC32();
        for (long at = 0; at < nbytes; at += CHUNK)
        {
            final int n = (int)Math.min(CHUNK, nbytes - at);
            data.position(at).get(chunk, 0, n);
            crc.update(chunk, 0, n);
        }
        header(name, nbytes, crc.getValue());
        for (long at = 0; at < nbytes; at += CHUNK)
        {
            final int n = (int)Math.min(CHUNK, nbytes - at);
            data.position(at).get(chunk, 0, n);
            out.write(chunk, 0, n);
        }
        data.position(0);
        position += nbytes;
    }

    /** Writes the central directory and the end record; the stream stays open. */
    void finish() throws IOException
    {
        final long directoryOffset = position;
        final byte[] directory = centralDirectory.toByteArray();
        out.write(directory);
        position += directory.length;
        checkZip32(position, "archive");
        final ByteArrayOutputStream end = new ByteArrayOutputStream();
        u32(end, 0x06054b50L);
        u16(end, 0);
        u16(end, 0);
        u16(end, entries);
        u16(end, entries);
        u32(end, directory.length);
        u32(end, directoryOffset);
        u16(end, 0);
        out.write(end.toByteArray());
        out.flush();
    }

    private void header(final String name, final long size, final long crc) throws IOException
    {
        checkZip32(position + size, name);
        if (entries == 0xffff)
        {
            throw new IOException("zip archive: more than 65535 entries need ZIP64, which ding4j does not write");
        }
        final byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        final long unpadded = position + LOCAL_HEADER_BYTES + nameBytes.length + EXTRA_HEADER_BYTES;
        final int pad = (int)((ALIGNMENT - unpadded % ALIGNMENT) % ALIGNMENT);
        final ByteArrayOutputStream local = new ByteArrayOutputStream();
        u32(local, 0x04034b50L);
        common(local, size, crc, nameBytes.length, EXTRA_HEADER_BYTES + pad);
        local.write(nameBytes);
        u16(local, 0x4246); // "FB": PyTorch's padding field
        u16(local, pad);
        for (int i = 0; i < pad; i++)
        {
            local.write('Z');
        }
        final long headerOffset = position;
        out.write(local.toByteArray());
        position += local.size();

        u32(centralDirectory, 0x02014b50L);
        u16(centralDirectory, 20);
        common(centralDirectory, size, crc, nameBytes.length, 0);
        u16(centralDirectory, 0); // comment
        u16(centralDirectory, 0); // disk
        u16(centralDirectory, 0); // internal attributes
        u32(centralDirectory, 0); // external attributes
        u32(centralDirectory, headerOffset);
        centralDirectory.write(nameBytes);
        entries++;
    }

    /** The fields local and central headers share, from "version needed" to "extra length". */
    private static void common(final ByteArrayOutputStream b, final long size, final long crc, final int nameLength,
        final int extraLength)
    {
        u16(b, 20);
        u16(b, 0);
        u16(b, 0); // stored
        u16(b, 0);
        u16(b, DOS_DATE_1980_01_01);
        u32(b, crc);
        u32(b, size);
        u32(b, size);
        u16(b, nameLength);
        u16(b, extraLength);
    }

    private static void checkZip32(final long offset, final String what) throws IOException
    {
        if (offset > MAX_ZIP32)
        {
            throw new IOException("zip archive: " + what + " ends past 4 GiB; ZIP64 archives are not written");
        }
    }

    private static void u16(final ByteArrayOutputStream b, final int v)
    {
        b.write(v);
        b.write(v >>> 8);
    }

    private static void u32(final ByteArrayOutputStream b, final long v)
    {
        u16(b, (int)(v & 0xffff));
        u16(b, (int)((v >>> 16) & 0xffff));
    }
}
