package org.ding4j.checkpoint;

import java.io.IOException;
import java.nio.file.Path;

/** A checkpoint file that is truncated, corrupted or not a checkpoint; the message names the file. */
public final class CorruptCheckpointException extends IOException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param file   the file
     * @param reason what is wrong with it
     */
    public CorruptCheckpointException(final Path file, final String reason)
    {
        super("checkpoint " + file + " is unusable: " + reason);
    }
}
