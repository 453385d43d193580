package org.ding4j.example.dqn;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.ding4j.checkpoint.AtomicFiles;

/** Writes a run's {@code summary.json} atomically (temp file, fsync, rename). */
final class SummaryFile
{
    private SummaryFile()
    {
    }

    /** {@code elastic}: the restarts of a launcher's job ({@code --max-restarts}), or null (left out). */
    static void write(final DqnPipeline.Summary summary, final Map<String, Object> startup,
        final Map<String, Object> elastic, final Path file) throws IOException
    {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("solved", summary.solved());
        json.put("interrupted", summary.interrupted());
        json.put("error", summary.error());
        json.put("stop_value", summary.stopValue());
        json.put("best_eval_return", summary.bestEvalReturn());
        json.put("env_steps", summary.envSteps());
        json.put("train_iter", summary.trainIter());
        json.put("wall_s", summary.wallS());
        json.put("setup_s", summary.setupS());
        json.put("warmup_s", summary.warmupS());
        json.put("updates_per_s", summary.updatesPerS());
        json.put("mode", summary.mode());
        json.put("seed", summary.seed());
        json.put("startup", startup);
        if (null != elastic)
        {
            json.put("elastic", elastic);
        }
        // The JVM's age when the summary is written: the process wall time but for writing this file and exiting.
        json.put("process_uptime_s", ManagementFactory.getRuntimeMXBean().getUptime() / 1e3);
        json.putAll(summary.paths());
        AtomicFiles.write(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsBytes(json));
    }
}
