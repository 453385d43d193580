package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A learner embedded in a host JVM that owns its process: after a run and close, the host's own SIGTERM handler still
 * gets SIGTERM, no shutdown hook of ding4j's is there (the host's is and runs), and no thread of ding4j's outlives
 * close; every thread the learner started came from the host's thread factory.
 */
class GoodGuestTest
{
    @TempDir
    Path dir;

    @Test
    void aLearnerShouldLeaveItsHostAsItFoundIt() throws Exception
    {
        final List<String> command = ChildJvm.javaCommand(dir, GoodGuestChild.class.getName());
        command.add(1, "--add-opens=java.base/java.lang=ALL-UNNAMED");
        command.add(dir.resolve("guest").toString());
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), output);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("trained 20"), output);
        assertTrue(output.contains("ding4j threads alive after close []"), output);
        assertTrue(output.contains("shutdown hooks [host-hook]"), output);
        assertTrue(output.contains("host handler got SIGTERM") && output.contains("host handler answered true"),
            output);
        assertTrue(output.contains("host hook ran"), output);
        final String made = output.lines().filter(l -> l.startsWith("threads made by the host's factory "))
            .findFirst().orElseThrow();
        // The loader's producer and its two workers at least (ArchitectureTest: no other way to start one).
        assertTrue(Integer.parseInt(made.substring(made.lastIndexOf(' ') + 1)) >= 3, output);
    }
}
