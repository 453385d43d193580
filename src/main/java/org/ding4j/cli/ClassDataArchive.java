package org.ding4j.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Marks the class-data archive (AppCDS, or JDK 25's AOT cache) that this JVM writes at its exit as one of a completed
 * training run. The launcher starts a {@code train} without a usable archive with {@code -XX:ArchiveClassesAtExit=FILE}
 * (JDK 25: {@code -XX:AOTMode=record -XX:AOTConfiguration=FILE}, the cache made from it later) and
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
    /** Set by the launcher when the user added JVM options, which may be why the JVM refused the archive. */
    static final String KEEP_PROPERTY = "ding4j.cds.keep";
    /** What the mark's name adds to the archive's. */
    static final String MARK_SUFFIX = ".complete";

    private ClassDataArchive()
    {
    }

    /**
     * What this JVM does with a class-data archive, for {@code summary.json}. An archive the launcher gave it but the
     * JVM refused (built for another JDK or class path, or truncated; the launcher silences the JVM's message) is
     * deleted here, so that the next {@code train} writes a new one instead of every run starting without; unless
     * the user's own JVM options ({@code DING4J_JAVA_OPTS}: a JFR recording refused JDK 25's AOT cache) may be why.
     *
     * @return {@code map PATH}, {@code rejected PATH (removed)}, {@code rejected PATH (kept: ...)},
     *     {@code write PATH} or {@code none}
     */
    static String status()
    {
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (arg.startsWith("-XX:SharedArchiveFile=") || arg.startsWith("-XX:AOTCache="))
            {
                final String archive = arg.substring(arg.indexOf('=') + 1);
                final Boolean mapped = mapped(archive);
                if (Boolean.FALSE.equals(mapped) && Boolean.getBoolean(KEEP_PROPERTY))
                {
                    return "rejected " + archive + " (kept: DING4J_JAVA_OPTS's options may not fit it)";
                }
                if (Boolean.FALSE.equals(mapped))
                {
                    try
                    {
                        Files.deleteIfExists(Path.of(archive));
                    }
                    catch (final IOException ex)
                    {
                        return "rejected " + archive + " (not removed: " + ex + ")";
                    }
                    return "rejected " + archive + " (removed)";
                }
                return "map " + archive + (null == mapped ? " (unverified)" : "");
            }
            if (arg.startsWith("-XX:ArchiveClassesAtExit=") || arg.startsWith("-XX:AOTConfiguration="))
            {
                return "write " + arg.substring(arg.indexOf('=') + 1);
            }
        }
        return "none";
    }

    /** @return whether the file is mapped into this process, or null where /proc/self/maps cannot be read */
    private static Boolean mapped(final String archive)
    {
        try (Stream<String> maps = Files.lines(Path.of("/proc/self/maps")))
        {
            return maps.anyMatch(line -> line.contains(archive));
        }
        catch (final IOException | UncheckedIOException ex)
        {
            return null;
        }
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
