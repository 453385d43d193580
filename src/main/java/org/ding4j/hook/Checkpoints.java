package org.ding4j.hook;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A learner's checkpoints as hooks see them: the policy's state plus {@code last_iter} and {@code last_step}, in
 * PyTorch's format, written atomically into the learner's checkpoint folder.
 */
public interface Checkpoints
{
    /** Checkpoint key of the completed-update count. */
    String LAST_ITER = "last_iter";
    /** Checkpoint key of the collector env step. */
    String LAST_STEP = "last_step";

    /** @return {@code ./{exp}/ckpt}, or {@code ./{exp}/ckpt_{instance}} when the instance is not {@code learner} */
    Path dir();

    /** @return the file name the next {@code save_ckpt} call writes instead of the iteration name, or null */
    String nameOverride();

    /**
     * Writes the learner's checkpoint now.
     *
     * @param fileName file name inside {@link #dir()}
     * @return the file written
     * @throws IOException if the write fails (an older file of that name stays intact)
     * @throws IllegalArgumentException if the name is not a plain file name (a path, "..", empty): everything a learner
     *                                  writes stays under its folder
     */
    Path save(String fileName) throws IOException;

    /**
     * Reads a checkpoint: passes it to the policy's {@code loadStateDict}, then restores {@code last_iter} and
     * {@code last_step} when present (integers >= 0 and >= -1, else the file is refused before anything changes).
     *
     * @param file the checkpoint
     * @throws IOException if it cannot be read
     */
    void load(Path file) throws IOException;
}
