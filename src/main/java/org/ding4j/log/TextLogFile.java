package org.ding4j.log;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * A learner's own text log, {@code ./{exp}/log/{instance}/{instance}_logger.txt}, written beside SLF4J so that the
 * file exists whatever logging backend the application uses. Lines are appended and flushed one by one. Thread-safe
 * (the training thread and the log reporter both write).
 */
public final class TextLogFile implements AutoCloseable
{
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Path file;
    private final String name;
    private BufferedWriter out;

    /**
     * Opens (appending) the file, creating its folder.
     *
     * @param file the log file
     * @param name shown in each line, e.g. the instance name
     * @throws UncheckedIOException if the file cannot be opened
     */
    public TextLogFile(final Path file, final String name)
    {
        this.file = file;
        this.name = name;
        try
        {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
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
     * Appends {@code [time][name][LEVEL] message}; after close, or if the disk fails, the line is lost (the SLF4J
     * copy stays) rather than failing training.
     *
     * @param level   e.g. INFO
     * @param message the text
     */
    public synchronized void write(final String level, final String message)
    {
        if (null == out)
        {
            return;
        }
        try
        {
            out.write("[" + STAMP.format(LocalDateTime.now()) + "][" + name + "][" + level + "] " + message);
            out.newLine();
            out.flush();
        }
        catch (final IOException ex)
        {
            close();
        }
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
