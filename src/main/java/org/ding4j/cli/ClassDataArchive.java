package org.ding4j.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Marks the class-data archive (AppCDS) that this JVM writes at its exit as one of a completed training run. The
 * launcher starts a {@code train} without a usable archive with {@code -XX:ArchiveClassesAtExit=FILE} and
 * {@value #PROPERTY}{@code =FILE}; when the run completes, this creates {@code FILE.complete}, and the next launch
 * moves FILE into place as the archive (or deletes it if the mark is missing: a failed run or {@code --help}, which
 * loaded only a few of the classes, must not become the archive every later run maps). Why at exit and not at run
 * time: JDK 17's run-time dump ({@code VM.cds dynamic_dump}) skips classes that are loaded but not linked, and most
 * of JavaCPP's ~1,700 libtorch binding classes are exactly that.
 */
final class ClassDataArchive
{
    /** The system property naming the archive file this JVM writes at its exit. */
    static final String PROPERTY = "ding4j.cds.partial";
    /** What the mark's name adds to the archive's. */
    static final String MARK_SUFFIX = ".complete";

    private ClassDataArchive()
    {
    }

    /**
     * Marks the archive complete if the launcher asked for one; a failure to create the mark only means the archive
     * is not kept (the run's own results are saved already).
     *
     * @return whether a mark now exists
     */
    static boolean markComplete()
    {
        final String partial = System.getProperty(PROPERTY);
        if (null == partial || partial.isEmpty())
        {
            return false;
        }
        try
        {
            Files.createFile(Path.of(partial + MARK_SUFFIX));
            return true;
        }
        catch (final FileAlreadyExistsException ex)
        {
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }
}
