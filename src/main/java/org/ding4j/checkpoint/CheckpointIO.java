package org.ding4j.checkpoint;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads and writes checkpoints: maps of named tensors and plain values (strings, longs, doubles, booleans, null,
 * lists, nested maps with string or long keys). Implementations write atomically and verify on read.
 */
public interface CheckpointIO
{
    /**
     * Writes a checkpoint atomically: a reader sees the old file or the complete new one.
     *
     * @param file  the final path
     * @param state what to save
     * @throws IOException if writing fails; an existing file stays as it was
     */
    void write(Path file, Map<String, Object> state) throws IOException;

    /**
     * Reads a checkpoint, verifying it.
     *
     * @param file the path
     * @return the saved map; tensors are new CPU tensors the caller owns
     * @throws IOException naming the file if it is missing, truncated, corrupted or of another format
     */
    Map<String, Object> read(Path file) throws IOException;
}
