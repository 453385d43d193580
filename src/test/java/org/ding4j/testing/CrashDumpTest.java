package org.ding4j.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A child JVM that dies in native code writes its crash dump into the test's folder, not the working tree. */
class CrashDumpTest
{
    /** Writes through a null address: the JVM dies with SIGSEGV and writes hs_err. */
    static final class Crash
    {
        public static void main(final String[] args) throws ReflectiveOperationException
        {
            final Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            System.out.println("crashing");
            ((sun.misc.Unsafe)field.get(null)).putLong(0L, 42L);
        }
    }

    private static List<Path> dumps(final Path folder) throws IOException
    {
        try (Stream<Path> files = Files.list(folder))
        {
            return files.filter(f -> f.getFileName().toString().startsWith("hs_err_pid")).toList();
        }
    }

    @Test
    void aCrashingChildShouldLeaveItsDumpInTheTestFolder(@TempDir final Path dir) throws Exception
    {
        final Path workingTree = Path.of("").toAbsolutePath();
        final List<Path> before = dumps(workingTree);
        final List<String> command = ChildJvm.javaCommand(dir, Crash.class.getName());
        command.add(1, "-XX:-CreateCoredumpOnCrash");
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> line.equals("crashing"));
        assertNotEquals(0, child.await(60), child.output());
        assertEquals(1, dumps(dir).size(), "one dump in the test folder: " + child.output());
        assertEquals(before, dumps(workingTree), "no new dump in " + workingTree);
        assertTrue(child.output().contains(dir.toString()), "the JVM names where the dump went");
    }
}
