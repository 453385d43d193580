package org.ding4j.log;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

import org.slf4j.LoggerFactory;

/**
 * A learner's own text log, {@code ./{exp}/log/{instance}/{instance}_logger.txt}, written beside SLF4J so that the
 * file exists whatever logging backend the application uses. Lines are appended and written to the file one by one
 * (UTF-8), through reused buffers: a line costs no allocation once they have grown, except the time stamp's text once
 * per second. Thread-safe (the training thread and the log reporter both write).
 */
public final class TextLogFile implements AutoCloseable
{
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Path file;
    private final String name;
    private final String messagePrefix;
    private final StringBuilder line = new StringBuilder(256);
    private byte[] bytes = new byte[1024];
    private long stampSecond = Long.MIN_VALUE;
    private String stamp;
    private FileOutputStream out;

    /**
     * Opens (appending) the file, creating its folder.
     *
     * @param file          the log file
     * @param name          shown in each line, e.g. the instance name
     * @param messagePrefix written before each message, e.g. {@code [RANK0]: }
     * @throws UncheckedIOException if the file cannot be opened
     */
    public TextLogFile(final Path file, final String name, final String messagePrefix)
    {
        this.file = file;
        this.name = name;
        this.messagePrefix = messagePrefix;
        try
        {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.out = new FileOutputStream(file.toFile(), true);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open the learner log " + file, ex);
        }
    }

    /** @return the file */
    public Path file()
    {
        return file;
    }

    /**
     * Appends {@code [time][name][LEVEL] {prefix}message}; after close, or if the disk fails, the line is lost (the
     * SLF4J copy stays) rather than failing training; the first failure is reported through SLF4J with the file.
     *
     * @param level   e.g. INFO
     * @param message the text (read before this returns)
     */
    public synchronized void write(final String level, final CharSequence message)
    {
        if (null == out)
        {
            return;
        }
        final long second = Math.floorDiv(System.currentTimeMillis(), 1000L);
        if (second != stampSecond)
        {
            stamp = STAMP.format(LocalDateTime.ofInstant(Instant.ofEpochSecond(second), ZoneId.systemDefault()));
            stampSecond = second;
        }
        line.setLength(0);
        line.append('[').append(stamp).append("][").append(name).append("][").append(level).append("] ")
            .append(messagePrefix).append(message).append(System.lineSeparator());
        try
        {
            final int length = utf8(line); // first: it may replace the array
            out.write(bytes, 0, length);
        }
        catch (final IOException ex)
        {
            // Reported once, through SLF4J (the other copy of every line): later lines are dropped silently.
            LoggerFactory.getLogger(TextLogFile.class).error("text log {}: write failed, later lines go to SLF4J "
                + "only: {}", file, ex.toString());
            close();
        }
    }

    /** Encodes the text into {@link #bytes} (unpaired surrogates as '?', as Java's encoder does). */
    private int utf8(final CharSequence text)
    {
        final int length = text.length();
        if (bytes.length < 3 * length)
        {
            bytes = new byte[3 * length + 256];
        }
        final byte[] b = bytes;
        int n = 0;
        for (int i = 0; i < length; i++)
        {
            final char c = text.charAt(i);
            if (c < 0x80)
            {
                b[n++] = (byte)c;
            }
            else if (c < 0x800)
            {
                b[n++] = (byte)(0xc0 | (c >> 6));
                b[n++] = (byte)(0x80 | (c & 0x3f));
            }
            else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1)))
            {
                final int cp = Character.toCodePoint(c, text.charAt(++i));
                b[n++] = (byte)(0xf0 | (cp >> 18));
                b[n++] = (byte)(0x80 | ((cp >> 12) & 0x3f));
                b[n++] = (byte)(0x80 | ((cp >> 6) & 0x3f));
                b[n++] = (byte)(0x80 | (cp & 0x3f));
            }
            else if (Character.isSurrogate(c))
            {
                b[n++] = '?';
            }
            else
            {
                b[n++] = (byte)(0xe0 | (c >> 12));
                b[n++] = (byte)(0x80 | ((c >> 6) & 0x3f));
                b[n++] = (byte)(0x80 | (c & 0x3f));
            }
        }
        return n;
    }

    /** Closes the file; later writes are dropped. */
    @Override
    public synchronized void close()
    {
        if (null != out)
        {
            try
            {
                out.close();
            }
            catch (final IOException ex)
            {
                // Nothing more can be written to it either way.
            }
            out = null;
        }
    }
}
