package org.ding4j.testing;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.ding4j.internal.JvmFlags;

/**
 * The programs in {@code examples/} compiled against the library as an application compiles them (all lint
 * warnings errors), and run in JVMs of their own with the library and only its required dependencies (the README's
 * list) on the class path.
 */
public final class ExamplePrograms
{
    private ExamplePrograms()
    {
    }

    /**
     * Compiles every {@code .java} file of an examples folder.
     *
     * @param folder  the folder under {@code examples/}
     * @param classes where the classes go
     */
    public static void compile(final Path folder, final Path classes) throws IOException
    {
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK is needed to compile the examples");
        final List<File> sources;
        try (var files = Files.list(folder))
        {
            sources = files.filter(f -> f.toString().endsWith(".java")).map(Path::toFile).sorted().toList();
        }
        final StringWriter diagnostics = new StringWriter();
        final boolean ok = javac.getTask(diagnostics, null, null, List.of("-Xlint:all,-try,-path", "-Werror", "-d",
            classes.toString(), "-cp", System.getProperty("java.class.path")), null,
            javac.getStandardFileManager(null, null, StandardCharsets.UTF_8).getJavaFileObjects(
                sources.toArray(new File[0]))).call();
        assertTrue(ok, diagnostics::toString);
    }

    /**
     * Starts a compiled example.
     *
     * @param classes  where it was compiled
     * @param withFlag whether the JVM gets the flag the README names
     * @param main     its main class
     * @param args     its arguments
     * @return the process, its error stream merged into its output
     */
    public static Process start(final Path classes, final boolean withFlag, final String main, final String... args)
        throws IOException
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        if (withFlag)
        {
            command.addAll(List.of(JvmFlags.AGRONA_FLAG.split(" ")));
        }
        command.addAll(List.of("-Dorg.bytedeco.javacpp.maxPhysicalBytes=0", "-cp",
            classes + File.pathSeparator + requiredClassPath(), main));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** The jars the README names as required (no SLF4J binding, no logback, Micrometer or protobuf). */
    private static final List<String> REQUIRED = List.of("javacpp-", "pytorch-", "openblas-", "slf4j-api-",
        "agrona-", "HdrHistogram-", "jackson-databind-", "jackson-annotations-", "jackson-core-",
        "jackson-dataformat-yaml-", "snakeyaml-");

    /**
     * @return the library's classes and only its required dependencies, from this JVM's class path: an example
     *     that trains on it shows the library needs nothing more
     */
    public static String requiredClassPath()
    {
        final List<String> kept = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            final String name = Path.of(entry).getFileName().toString();
            if (entry.endsWith(File.separator + "classes") && !entry.endsWith("test-classes")
                || REQUIRED.stream().anyMatch(name::startsWith))
            {
                kept.add(entry);
            }
        }
        return String.join(File.pathSeparator, kept);
    }

    /**
     * @param process a started example
     * @return everything it printed, once it exited (within 300 s)
     */
    public static String outputOf(final Process process) throws Exception
    {
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(300, TimeUnit.SECONDS), output);
        return output;
    }
}
