package org.ding4j.log;

import java.util.zip.CRC32C;

/**
 * TFRecord framing, as TensorBoard reads event files:
 * <pre>
 *   0                8                12               12+n             16+n
 *   +----------------+----------------+----------------+----------------+
 *   | length (u64 LE)| masked CRC32C  | data (n bytes) | masked CRC32C  |
 *   |                | of the length  |                | of the data    |
 *   +----------------+----------------+----------------+----------------+
 * </pre>
 * Masking is TensorFlow's: {@code ((crc >>> 15) | (crc << 17)) + 0xa282ead8}.
 */
public final class TfRecordDescriptor
{
    /** Bytes before the data: length and its CRC. */
    public static final int HEADER_LENGTH = Long.BYTES + Integer.BYTES;

    private static final int MASK_DELTA = 0xa282ead8;

    private TfRecordDescriptor()
    {
    }

    /**
     * @param crc a CRC32C value
     * @return it masked as TFRecord stores it
     */
    public static int mask(final int crc)
    {
        return ((crc >>> 15) | (crc << 17)) + MASK_DELTA;
    }

    /**
     * @param crc32c  a reusable CRC engine (reset here)
     * @param bytes   the bytes
     * @param offset  first byte
     * @param length  how many
     * @return the masked CRC32C of that range
     */
    public static int maskedCrc(final CRC32C crc32c, final byte[] bytes, final int offset, final int length)
    {
        crc32c.reset();
        crc32c.update(bytes, offset, length);
        return mask((int)crc32c.getValue());
    }
}
