package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TextLogFileTest
{
    @TempDir
    Path dir;

    @Test
    void shouldAppendPrefixedUtf8LinesOfAnyLengthFromAReusedBuilder() throws IOException
    {
        final Path file = dir.resolve("log/learner/learner_logger.txt");
        final String text = "é 漢 \uD83D\uDE00 lone \uD800 end";
        final StringBuilder reused = new StringBuilder();
        try (TextLogFile log = new TextLogFile(file, "learner", "[RANK0]: "))
        {
            log.write("INFO", text);
            // Longer than the initial byte buffer: the line must be written from the grown one, whole.
            reused.append("x".repeat(5000));
            log.write("INFO", reused);
            reused.setLength(0);
            reused.append("short");
            log.write("DEBUG", reused);
        }
        final List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals(3, lines.size());
        final String first = lines.get(0);
        assertTrue(first.matches("\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d]\\[learner]\\[INFO] \\[RANK0]: .*"), first);
        // Java's own UTF-8 encoder is the reference, including '?' for the unpaired surrogate.
        assertArrayEquals(text.getBytes(StandardCharsets.UTF_8),
            first.substring(first.indexOf(": ") + 2).getBytes(StandardCharsets.UTF_8));
        assertTrue(lines.get(1).endsWith("]: " + "x".repeat(5000)), "the long line, whole");
        assertTrue(lines.get(2).endsWith("[DEBUG] [RANK0]: short"), lines.get(2));
    }
}
