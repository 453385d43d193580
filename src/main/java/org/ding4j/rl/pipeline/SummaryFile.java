package org.ding4j.rl.pipeline;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.ding4j.checkpoint.AtomicFiles;

/** Writes a run's {@code summary.json} atomically (temp file, fsync, rename), for every algorithm's pipeline. */
public final class SummaryFile
{
    private SummaryFile()
    {
    }

    /**
     * @param fields the run's fields, in order; {@code process_uptime_s} is added before the paths
     * @param paths  where the run's files are, appended last
     * @param file   the summary file
     * @throws IOException if it cannot be written
     */
    public static void write(final Map<String, Object> fields, final Map<String, Object> paths, final Path file)
        throws IOException
    {
        final Map<String, Object> json = new LinkedHashMap<>(fields);
        // The JVM's age when the summary is written: the process wall time but for writing this file and exiting.
        json.put("process_uptime_s", ManagementFactory.getRuntimeMXBean().getUptime() / 1e3);
        json.putAll(paths);
        writeJson(json, file);
    }

    /**
     * @param json the whole summary, in order
     * @param file the summary file
     * @throws IOException if it cannot be written
     */
    static void writeJson(final Map<String, Object> json, final Path file) throws IOException
    {
        AtomicFiles.write(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsBytes(json));
    }
}
