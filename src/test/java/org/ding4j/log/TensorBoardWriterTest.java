package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import com.google.protobuf.CodedInputStream;
import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Writes real event files and parses them back: framing, both CRCs of every record, then the protobuf. */
class TensorBoardWriterTest
{
    @TempDir
    Path dir;

    @Test
    void shouldWriteScalarsAndHistogramsTensorBoardCanRead() throws IOException
    {
        final TensorBoardWriter writer = new TensorBoardWriter(dir.resolve("learner_tb_logger"));
        for (int i = 1; i <= 100; i++)
        {
            writer.addScalar("learner_iter/total_loss_avg", 1.0 / i, i);
        }
        writer.addScalar("learner_step/total_loss_avg", Double.NaN, 4000);
        writer.addHistogram("learner/td", new double[] {-1.5, 0.0, 0.25, 0.25, 3.0}, 100);
        // Tags are UTF-8 (ASCII made every other character '?', merging these three into one tag).
        writer.addScalar("learner_iter/损失_avg", 1.0, 1);
        writer.addScalar("learner_iter/λ_avg", 2.0, 1);
        writer.addHistogram("learner/😀\ud800x", new double[] {1.0}, 1);
        writer.flush();
        assertTrue(Files.size(writer.file()) > 0, "flush() writes what was accepted");
        writer.close();
        writer.close();
        assertTrue(writer.file().getFileName().toString().startsWith("events.out.tfevents."));

        final List<Event> events = read(writer.file());
        assertEquals(106, events.size());
        assertEquals("learner_iter/损失_avg", events.get(103).tag);
        assertEquals(1.0f, events.get(103).simpleValue);
        assertEquals("learner_iter/λ_avg", events.get(104).tag);
        assertEquals("learner/😀?x", events.get(105).tag, "a lone surrogate is one '?', as Java encodes it");
        assertEquals(1.0, events.get(105).num);
        assertEquals("brain.Event:2", events.get(0).fileVersion);
        for (int i = 1; i <= 100; i++)
        {
            final Event e = events.get(i);
            assertEquals("learner_iter/total_loss_avg", e.tag);
            assertEquals(i, e.step);
            assertEquals((float)(1.0 / i), e.simpleValue);
            assertTrue(e.wallTime > 1.7e9);
        }
        assertTrue(Float.isNaN(events.get(101).simpleValue), "NaN is recorded as it is");
        final Event histogram = events.get(102);
        assertEquals("learner/td", histogram.tag);
        assertEquals(100, histogram.step);
        assertEquals(-1.5, histogram.min);
        assertEquals(3.0, histogram.max);
        assertEquals(5.0, histogram.num);
        assertEquals(2.0, histogram.sum);
        assertEquals(2.25 + 0.0625 * 2 + 9.0, histogram.sumSquares);
        assertEquals(4, histogram.bucketLimits.size(), "only non-empty buckets");
        assertEquals(List.of(1.0, 1.0, 2.0, 1.0), histogram.buckets);
        assertEquals(0, writer.droppedCount());
    }

    @Test
    void shouldPutEventsInTheFileWhileTheWriterIsOpen() throws Exception
    {
        final Path folder = dir.resolve("live");
        final TensorBoardWriter writer = new TensorBoardWriter(folder);
        try (WatchService watch = folder.getFileSystem().newWatchService())
        {
            folder.register(watch, StandardWatchEventKinds.ENTRY_MODIFY);
            for (int i = 1; i <= 10; i++)
            {
                writer.addScalar("learner_iter/total_loss_avg", i, i);
            }
            // No flush() and no close(): the writer thread hands them to the file within its interval.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<Event> events = List.of();
            while (events.size() < 11 && System.nanoTime() < deadline)
            {
                final WatchKey key = watch.poll(TensorBoardWriter.FLUSH_INTERVAL_MS * 5, TimeUnit.MILLISECONDS);
                if (null != key)
                {
                    key.pollEvents();
                    key.reset();
                }
                events = read(writer.file());
            }
            assertEquals(11, events.size(), "the version record and 10 scalars, readable while the writer is open");
            assertEquals(10, events.get(10).step);
        }
        finally
        {
            writer.close();
        }
    }

    /**
     * A writer never closed takes no shutdown hook in the host's JVM and keeps it from exiting neither: the child
     * exits at once, and its file holds whole events only (those flushed before the exit, if any).
     */
    @Test
    void aForgottenWriterShouldNeitherHoldTheJvmNorTakeAShutdownHook() throws Exception
    {
        final List<String> command = ChildJvm.javaCommand(dir, ForgottenCloseChild.class.getName());
        // The child reads the JVM's shutdown hook table.
        command.add(1, "--add-opens=java.base/java.lang=ALL-UNNAMED");
        command.add(dir.resolve("forgotten").toString());
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, child.exitValue(), output);
        final List<Event> events = read(Path.of(output.lines().reduce((a, b) -> b).orElseThrow().trim()));
        assertTrue(events.size() <= 51, "whole events only (it read back): " + events.size());
        assertTrue(output.contains("shutdown hooks: none of ding4j's"), output);
    }

    @Test
    void shouldCountWhatItDropsAndWriteEverythingItAccepted() throws IOException
    {
        final TensorBoardWriter writer = new TensorBoardWriter(dir.resolve("small"), 4096);
        final int offered = 20_000;
        for (int i = 0; i < offered; i++)
        {
            writer.addScalar("learner_iter/x", i, i);
        }
        writer.close();
        writer.addScalar("after/close", 1, 1);
        final List<Event> events = read(writer.file());
        assertEquals(offered + 1 - writer.droppedCount(), events.size() - 1,
            "written + dropped = offered (+ the one after close, dropped)");
        assertTrue(writer.droppedCount() >= 1);
        long previous = -1;
        for (final Event e : events.subList(1, events.size()))
        {
            assertTrue(e.step > previous, "accepted entries keep their order");
            previous = e.step;
        }
    }

    @Test
    void shouldRejectABadCapacity()
    {
        assertThrows(IllegalArgumentException.class, () -> new TensorBoardWriter(dir, 5000));
    }

    /** A decoded Event with at most one summary value. */
    static final class Event
    {
        double wallTime;
        long step;
        String fileVersion;
        String tag;
        float simpleValue;
        double min;
        double max;
        double num;
        double sum;
        double sumSquares;
        final List<Double> bucketLimits = new ArrayList<>();
        final List<Double> buckets = new ArrayList<>();
    }

    static List<Event> read(final Path file) throws IOException
    {
        final ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final List<Event> events = new ArrayList<>();
        final CRC32C crc = new CRC32C();
        while (in.hasRemaining())
        {
            final byte[] lengthBytes = new byte[8];
            in.get(lengthBytes);
            final long length = ByteBuffer.wrap(lengthBytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
            assertEquals(TfRecordDescriptor.maskedCrc(crc, lengthBytes, 0, 8), in.getInt(), "length CRC");
            final byte[] data = new byte[(int)length];
            in.get(data);
            assertEquals(TfRecordDescriptor.maskedCrc(crc, data, 0, data.length), in.getInt(), "data CRC");
            events.add(decode(data));
        }
        return events;
    }

    private static Event decode(final byte[] data) throws IOException
    {
        final Event event = new Event();
        final CodedInputStream in = CodedInputStream.newInstance(data);
        for (int tag = in.readTag(); 0 != tag; tag = in.readTag())
        {
            switch (tag >>> 3)
            {
                case 1 -> event.wallTime = in.readDouble();
                case 2 -> event.step = in.readInt64();
                case 3 -> event.fileVersion = in.readString();
                case 5 -> decodeSummary(in.readBytes().newCodedInput(), event);
                default -> in.skipField(tag);
            }
        }
        return event;
    }

    private static void decodeSummary(final CodedInputStream in, final Event event) throws IOException
    {
        for (int tag = in.readTag(); 0 != tag; tag = in.readTag())
        {
            if (1 == tag >>> 3)
            {
                final CodedInputStream value = in.readBytes().newCodedInput();
                for (int t = value.readTag(); 0 != t; t = value.readTag())
                {
                    switch (t >>> 3)
                    {
                        case 1 -> event.tag = value.readString();
                        case 2 -> event.simpleValue = value.readFloat();
                        case 5 -> decodeHistogram(value.readBytes().newCodedInput(), event);
                        default -> value.skipField(t);
                    }
                }
            }
            else
            {
                in.skipField(tag);
            }
        }
    }

    private static void decodeHistogram(final CodedInputStream in, final Event event) throws IOException
    {
        for (int tag = in.readTag(); 0 != tag; tag = in.readTag())
        {
            switch (tag >>> 3)
            {
                case 1 -> event.min = in.readDouble();
                case 2 -> event.max = in.readDouble();
                case 3 -> event.num = in.readDouble();
                case 4 -> event.sum = in.readDouble();
                case 5 -> event.sumSquares = in.readDouble();
                case 6, 7 ->
                {
                    final List<Double> target = 6 == tag >>> 3 ? event.bucketLimits : event.buckets;
                    final CodedInputStream packed = in.readBytes().newCodedInput();
                    while (!packed.isAtEnd())
                    {
                        target.add(packed.readDouble());
                    }
                }
                default -> in.skipField(tag);
            }
        }
    }
}
