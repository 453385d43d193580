package org.ding4j.log;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import org.agrona.BitUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.ding4j.internal.JvmFlags;
import org.ding4j.torch.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes TensorBoard event files ({@code events.out.tfevents.{seconds}.{host}}): TFRecord-framed protobuf
 * {@code Event}s holding {@code Summary} scalars and histograms.
 * <p>
 * Threads: any thread may call {@link #addScalar}/{@link #addHistogram}; they copy the entry into an Agrona
 * many-to-one ring buffer without allocating or blocking. When the ring is full the entry is dropped and counted
 * ({@link #droppedCount()}, with a warning per power-of-two drop count), so training never waits on disk. One
 * background thread encodes and writes the events, and hands them to the file system at most
 * {@value #FLUSH_INTERVAL_MS} ms after they were written, so TensorBoard shows a run while it goes and a killed
 * run keeps all but its last interval. {@link #flush()} waits until what was accepted before it is written;
 * {@link #close()} drains everything accepted, then closes the file (the learner closes its writer). It takes no
 * shutdown hook in the host's JVM: a writer never closed keeps no JVM from exiting (its thread is a daemon), and
 * loses what it had not handed to the file system by then, at most the last {@value #FLUSH_INTERVAL_MS} ms.
 */
public final class TensorBoardWriter implements SummaryWriter
{
    /** Default ring capacity in bytes. */
    public static final int DEFAULT_CAPACITY = 1 << 20;
    /** Longest time written events wait in the writer's buffer before they reach the file. */
    public static final long FLUSH_INTERVAL_MS = 200;

    private static final Logger LOG = LoggerFactory.getLogger(TensorBoardWriter.class);
    private static final int SCALAR = 1;
    private static final int HISTOGRAM = 2;
    private static final int FLUSH = 3;
    private static final long CLOSE_TIMEOUT_MS = 10_000;
    private static final long FLUSH_INTERVAL_NS = FLUSH_INTERVAL_MS * 1_000_000L;
    // Message layout: step (8) | wall time (8) | value or count (8) | tag length (4) | tag ASCII | doubles...
    private static final int STEP_OFFSET = 0;
    private static final int WALL_OFFSET = 8;
    private static final int VALUE_OFFSET = 16;
    private static final int TAG_LENGTH_OFFSET = 24;
    private static final int TAG_OFFSET = 28;

    private static final AtomicLong FILES = new AtomicLong();

    private final Path file;
    private final RingBuffer ring;
    private final Thread writerThread;
    private final AtomicLong dropped = new AtomicLong();
    /** Entries larger than the ring's largest message: dropped whatever the queue holds, and said so by tag. */
    private final AtomicLong oversized = new AtomicLong();
    private final AtomicLong flushRequests = new AtomicLong();
    private final AtomicLong flushesDone = new AtomicLong();
    private volatile boolean closing;
    private volatile IOException failure;

    /**
     * Creates the event file and starts the writer thread.
     *
     * @param logDir        the TensorBoard log folder (created if needed)
     * @param capacityBytes ring capacity, a power of two >= 4096
     * @throws IOException              if the file cannot be created
     * @throws IllegalArgumentException if the capacity is not a power of two >= 4096
     */
    public TensorBoardWriter(final Path logDir, final int capacityBytes) throws IOException
    {
        JvmFlags.requireAgronaAccess();
        if (capacityBytes < 4096 || !BitUtil.isPowerOfTwo(capacityBytes))
        {
            throw new IllegalArgumentException("capacityBytes: expected a power of two >= 4096, got " + capacityBytes);
        }
        Files.createDirectories(logDir);
        final long seconds = System.currentTimeMillis() / 1000;
        // TensorFlow's own suffix: time, host, pid and a per-process counter keep two writers apart.
        this.file = logDir.resolve("events.out.tfevents." + seconds + "." + host() + "."
            + ProcessHandle.current().pid() + "." + FILES.incrementAndGet());
        final OutputStream out = new java.io.BufferedOutputStream(
            Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), 1 << 16);
        this.ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(capacityBytes + RingBufferDescriptor.TRAILER_LENGTH)));
        final Encoder encoder = new Encoder(out);
        encoder.writeFileVersion();
        this.writerThread = Threads.newThread(() -> run(encoder), "tensorboard");
        writerThread.start();
    }

    /**
     * @param logDir the TensorBoard log folder
     * @throws IOException if the file cannot be created
     */
    public TensorBoardWriter(final Path logDir) throws IOException
    {
        this(logDir, DEFAULT_CAPACITY);
    }

    private static String host()
    {
        try
        {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (final IOException ex)
        {
            return "localhost";
        }
    }

    /** @return the event file */
    public Path file()
    {
        return file;
    }

    /** @return entries dropped because the ring was full (or the writer closed) */
    public long droppedCount()
    {
        return dropped.get();
    }

    @Override
    public void addScalar(final String tag, final double value, final long step)
    {
        final int index = claim(SCALAR, tag, step, 0);
        if (index > 0)
        {
            final AtomicBuffer buffer = ring.buffer();
            buffer.putDouble(index + VALUE_OFFSET, value);
            ring.commit(index);
        }
    }

    @Override
    public void addHistogram(final String tag, final double[] values, final long step)
    {
        addHistogram(tag, values, values.length, step);
    }

    @Override
    public void addHistogram(final String tag, final double[] values, final int length, final long step)
    {
        Objects.checkFromIndexSize(0, length, values.length);
        final int index = claim(HISTOGRAM, tag, step, length);
        if (index > 0)
        {
            final AtomicBuffer buffer = ring.buffer();
            buffer.putLong(index + VALUE_OFFSET, length);
            // The tag's UTF-8 length, as claim() wrote it.
            final int base = index + TAG_OFFSET + buffer.getInt(index + TAG_LENGTH_OFFSET);
            for (int i = 0; i < length; i++)
            {
                buffer.putDouble(base + i * Double.BYTES, values[i]);
            }
            ring.commit(index);
        }
    }

    private int claim(final int type, final String tag, final long step, final int doubles)
    {
        Objects.requireNonNull(tag, "tag");
        final int tagBytes = utf8Length(tag);
        final int length = TAG_OFFSET + tagBytes + doubles * Double.BYTES;
        if (length > ring.maxMsgLength())
        {
            // Never written, however empty the queue: said with its tag and size, not as a full queue.
            final long count = oversized.incrementAndGet();
            dropped.incrementAndGet();
            if (BitUtil.isPowerOfTwo(count))
            {
                LOG.warn("TensorBoard: {} is {} bytes, more than the {} an entry may take (a histogram of at most ~{} "
                    + "values): dropped, {} such entries so far ({})", tag, length, ring.maxMsgLength(),
                    (ring.maxMsgLength() - TAG_OFFSET - tagBytes) / Double.BYTES, count, file);
            }
            return -1;
        }
        if (closing)
        {
            countDrop();
            return -1;
        }
        final int index = ring.tryClaim(type, length);
        if (index <= 0)
        {
            countDrop();
            return -1;
        }
        final AtomicBuffer buffer = ring.buffer();
        buffer.putLong(index + STEP_OFFSET, step);
        buffer.putLong(index + WALL_OFFSET, System.currentTimeMillis());
        buffer.putInt(index + TAG_LENGTH_OFFSET, tagBytes);
        if (tagBytes == tag.length())
        {
            // ASCII, the usual case: written without a byte[] of its own.
            buffer.putStringWithoutLengthAscii(index + TAG_OFFSET, tag);
        }
        else
        {
            // A tag is a protobuf string, UTF-8: ASCII's '?' for every other character merged distinct tags.
            buffer.putStringWithoutLengthUtf8(index + TAG_OFFSET, tag);
        }
        return index;
    }

    /**
     * @return the tag's length in UTF-8, as {@code String.getBytes(UTF_8)} encodes it (a lone surrogate becomes one
     *     '?'), without making those bytes
     */
    private static int utf8Length(final String tag)
    {
        int bytes = 0;
        for (int i = 0; i < tag.length(); i++)
        {
            final char c = tag.charAt(i);
            if (c < 0x80)
            {
                bytes += 1;
            }
            else if (c < 0x800)
            {
                bytes += 2;
            }
            else if (Character.isHighSurrogate(c) && i + 1 < tag.length()
                && Character.isLowSurrogate(tag.charAt(i + 1)))
            {
                bytes += 4;
                i++;
            }
            else
            {
                bytes += Character.isSurrogate(c) ? 1 : 3;
            }
        }
        return bytes;
    }

    private void countDrop()
    {
        final long count = dropped.incrementAndGet();
        if (BitUtil.isPowerOfTwo(count))
        {
            LOG.warn("TensorBoard queue full or closed: {} summaries dropped so far ({})", count, file);
        }
    }

    @Override
    public void flush()
    {
        final long request = flushRequests.incrementAndGet();
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 10_000, 1_000_000);
        while (!ring.write(FLUSH, new UnsafeBuffer(new byte[8]), 0, 8))
        {
            if (!writerThread.isAlive())
            {
                return;
            }
            idle.idle();
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MS);
        while (flushesDone.get() < request && writerThread.isAlive() && System.nanoTime() < deadline)
        {
            idle.idle();
        }
    }

    @Override
    public void close()
    {
        if (closing)
        {
            return;
        }
        closing = true;
        try
        {
            writerThread.join(CLOSE_TIMEOUT_MS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        if (null != failure)
        {
            LOG.error("TensorBoard writer failed on {}", file, failure);
        }
    }

    private void run(final Encoder encoder)
    {
        final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 100_000, 10_000_000);
        // The file version record is written but not flushed yet.
        boolean dirty = true;
        long lastFlush = System.nanoTime();
        try (encoder)
        {
            while (true)
            {
                final int read = ring.read(encoder);
                dirty |= read > 0;
                if (encoder.flushPending)
                {
                    encoder.flushPending = false;
                    encoder.out.flush();
                    flushesDone.incrementAndGet();
                    dirty = false;
                    lastFlush = System.nanoTime();
                }
                else if (dirty && System.nanoTime() - lastFlush >= FLUSH_INTERVAL_NS)
                {
                    encoder.out.flush();
                    dirty = false;
                    lastFlush = System.nanoTime();
                }
                if (0 == read)
                {
                    if (closing)
                    {
                        // Everything accepted before close() is in the ring: drain it, then stop.
                        while (ring.read(encoder) > 0)
                        {
                            continue;
                        }
                        return;
                    }
                    idle.idle();
                }
                else
                {
                    idle.reset();
                }
                if (null != encoder.error)
                {
                    throw encoder.error;
                }
            }
        }
        catch (final IOException ex)
        {
            failure = ex;
        }
    }

    /** Encodes ring entries into framed Event records; runs on the writer thread only. */
    private static final class Encoder implements MessageHandler, AutoCloseable
    {
        private final OutputStream out;
        private final CRC32C crc = new CRC32C();
        private final ByteBuffer header = ByteBuffer.allocate(TfRecordDescriptor.HEADER_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
        // One reused array for the writer's life: no garbage per event.
        private final ProtoBytes event = new ProtoBytes();
        private byte[] tag = new byte[256];
        private final HistogramProto histogram = new HistogramProto();
        private boolean flushPending;
        private IOException error;

        Encoder(final OutputStream out)
        {
            this.out = out;
        }

        void writeFileVersion() throws IOException
        {
            event.reset();
            event.writeDouble(1, System.currentTimeMillis() / 1000.0);
            event.writeString(3, "brain.Event:2");
            frame(event.size);
        }

        @Override
        public void onMessage(final int type, final MutableDirectBuffer buffer, final int index,
            final int length)
        {
            if (FLUSH == type)
            {
                flushPending = true;
                return;
            }
            try
            {
                encode(type, buffer, index);
            }
            catch (final IOException ex)
            {
                error = ex;
            }
        }

        private void encode(final int type, final MutableDirectBuffer buffer, final int index) throws IOException
        {
            final long step = buffer.getLong(index + STEP_OFFSET);
            final double wallTime = buffer.getLong(index + WALL_OFFSET) / 1000.0;
            final int tagLength = buffer.getInt(index + TAG_LENGTH_OFFSET);
            if (tag.length < tagLength)
            {
                tag = new byte[tagLength * 2];
            }
            buffer.getBytes(index + TAG_OFFSET, tag, 0, tagLength);
            final int tagFieldSize = ProtoBytes.lengthDelimitedSize(1, tagLength);
            final int valueSize;
            if (SCALAR == type)
            {
                valueSize = tagFieldSize + ProtoBytes.tagSize(2) + Float.BYTES;
            }
            else
            {
                histogram.prepare(buffer, index + TAG_OFFSET + tagLength, (int)buffer.getLong(index + VALUE_OFFSET));
                valueSize = tagFieldSize + ProtoBytes.lengthDelimitedSize(5, histogram.size());
            }
            final int summarySize = ProtoBytes.lengthDelimitedSize(1, valueSize);
            event.reset();
            event.writeDouble(1, wallTime);
            event.writeInt64(2, step);
            event.startLengthDelimited(5, summarySize);
            event.startLengthDelimited(1, valueSize);
            event.writeBytes(1, tag, 0, tagLength);
            if (SCALAR == type)
            {
                event.writeFloat(2, (float)buffer.getDouble(index + VALUE_OFFSET));
            }
            else
            {
                event.startLengthDelimited(5, histogram.size());
                histogram.write(event);
            }
            frame(event.size);
        }

        private void frame(final int length) throws IOException
        {
            header.clear();
            header.putLong(length);
            final byte[] lengthBytes = header.array();
            header.putInt(TfRecordDescriptor.maskedCrc(crc, lengthBytes, 0, Long.BYTES));
            out.write(lengthBytes, 0, TfRecordDescriptor.HEADER_LENGTH);
            out.write(event.bytes, 0, length);
            final int dataCrc = TfRecordDescriptor.maskedCrc(crc, event.bytes, 0, length);
            out.write(dataCrc & 0xff);
            out.write((dataCrc >>> 8) & 0xff);
            out.write((dataCrc >>> 16) & 0xff);
            out.write((dataCrc >>> 24) & 0xff);
        }

        @Override
        public void close() throws IOException
        {
            out.flush();
            out.close();
        }
    }
}
