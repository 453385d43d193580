package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The class-data archive a launched {@code train} writes at its exit and marks complete: real child JVMs, a real
 * archive that a later JVM must map ({@code -Xshare:on} refuses to start otherwise) and reports as mapped, no mark
 * from a failed run (the launcher then deletes its archive instead of mapping it), and an archive the JVM refuses
 * reported and removed. The JVM takes only JAR files on the class path of an
 * archive, so the probe runs from a jar of its own.
 */
class ClassDataArchiveTest
{
    @TempDir
    static Path dir;
    private static Path jar;

    @BeforeAll
    static void packProbe() throws IOException
    {
        jar = dir.resolve("probe.jar");
        final Path classes = Path.of(ClassDataArchive.class.getProtectionDomain().getCodeSource().getLocation()
            .getPath());
        final Path testClasses = Path.of(ArchiveProbe.class.getProtectionDomain().getCodeSource().getLocation()
            .getPath());
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)))
        {
            add(out, classes, "org/ding4j/cli/ClassDataArchive.class");
            add(out, testClasses, "org/ding4j/cli/ArchiveProbe.class");
        }
    }

    private static void add(final JarOutputStream out, final Path root, final String name) throws IOException
    {
        out.putNextEntry(new JarEntry(name));
        out.write(Files.readAllBytes(root.resolve(name)));
        out.closeEntry();
    }

    private static ChildJvm probe(final List<String> vmOptions, final String... args) throws IOException
    {
        final List<String> command = new java.util.ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(vmOptions);
        command.addAll(List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-cp", jar.toString(),
            ArchiveProbe.class.getName()));
        command.addAll(List.of(args));
        return ChildJvm.start(0, new ProcessBuilder(command), line -> line.startsWith("probe running"));
    }

    private static List<String> writing(final Path partial)
    {
        return List.of("-XX:ArchiveClassesAtExit=" + partial, "-D" + ClassDataArchive.PROPERTY + "=" + partial);
    }

    @Test
    void aCompletedRunShouldMarkAnArchiveThatTheNextJvmMaps() throws Exception
    {
        final Path partial = dir.resolve("done").resolve("ding4j.jsa.partial-1");
        Files.createDirectories(partial.getParent());
        final ChildJvm writer = probe(writing(partial));
        assertEquals(0, writer.await(60), writer.output());
        writer.firstLine(("status: write " + partial)::equals);
        writer.firstLine("marked: true"::equals);
        assertTrue(Files.size(partial) > 0, "archive written at exit");
        assertTrue(Files.exists(Path.of(partial + ClassDataArchive.MARK_SUFFIX)), "marked complete");
        // -Xshare:on: the JVM exits with an error instead of running without the archive.
        final ChildJvm reader = probe(List.of("-Xshare:on", "-XX:SharedArchiveFile=" + partial));
        assertEquals(0, reader.await(60), reader.output());
        reader.firstLine(("status: map " + partial)::equals);
        reader.firstLine("marked: false"::equals);
    }

    @Test
    void anArchiveTheJvmRefusesShouldBeRemovedSoTheNextRunRemakesIt() throws Exception
    {
        final Path archive = dir.resolve("refused").resolve("ding4j.jsa");
        Files.createDirectories(archive.getParent());
        Files.writeString(archive, "not an archive");
        final ChildJvm child = probe(List.of("-XX:SharedArchiveFile=" + archive));
        assertEquals(0, child.await(60), child.output());
        child.firstLine(("status: rejected " + archive + " (removed)")::equals);
        assertTrue(!Files.exists(archive), "removed");
    }

    /** With the user's own JVM options (the launcher then sets the keep property) a refused archive is kept. */
    @Test
    void anArchiveRefusedUnderTheUsersOptionsShouldBeKept() throws Exception
    {
        final Path archive = dir.resolve("kept").resolve("ding4j.jsa");
        Files.createDirectories(archive.getParent());
        Files.writeString(archive, "fits plain runs");
        final ChildJvm child = probe(List.of("-XX:SharedArchiveFile=" + archive,
            "-D" + ClassDataArchive.KEEP_PROPERTY + "=true"));
        assertEquals(0, child.await(60), child.output());
        child.firstLine(("status: rejected " + archive + " (kept: DING4J_JAVA_OPTS's options may not fit it)")::equals);
        assertEquals("fits plain runs", Files.readString(archive));
    }

    @Test
    void aFailedRunShouldLeaveItsArchiveUnmarked() throws Exception
    {
        final Path partial = dir.resolve("failed").resolve("ding4j.jsa.partial-2");
        Files.createDirectories(partial.getParent());
        final ChildJvm child = probe(writing(partial), "fail");
        assertEquals(1, child.await(60), child.output());
        try (Stream<Path> files = Files.list(partial.getParent()))
        {
            assertEquals(List.of(partial), files.toList(), "the archive, and no mark");
        }
    }
}
