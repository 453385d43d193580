package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;

/**
 * The learner's config: DI-engine's BaseLearner defaults and the rules each key must meet, so that a bad value
 * fails at construction with its full key path ({@code learner.hook.save_ckpt_after_iter: expected a positive
 * integer, got -5}). The {@code hook} section is open: the hook registry checks its entries (simplified values and
 * full forms, a full form under a simplified key too).
 */
final class LearnerConfig
{
    static final ConfigSchema SCHEMA = ConfigSchema.builder("learner", Config.of(defaults()))
        .rule("train_iterations", ValueRule.POSITIVE_INTEGER)
        .rule("dataloader.num_workers", ValueRule.NON_NEGATIVE_INTEGER)
        .rule("dataloader.chunk_size", ValueRule.POSITIVE_INTEGER)
        .rule("type", ValueRule.NON_EMPTY_STRING)
        .open("hook")
        .build();

    private LearnerConfig()
    {
    }

    private static Map<String, Object> defaults()
    {
        final Map<String, Object> hook = new LinkedHashMap<>();
        hook.put("load_ckpt_before_run", "");
        hook.put("log_show_after_iter", 100L);
        hook.put("save_ckpt_after_iter", 10000L);
        hook.put("save_ckpt_after_run", true);
        final Map<String, Object> dataloader = new LinkedHashMap<>();
        dataloader.put("num_workers", 0L);
        dataloader.put("chunk_size", null);
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("type", "base");
        root.put("import_names", List.of());
        root.put("train_iterations", 1_000_000_000L);
        root.put("dataloader", dataloader);
        root.put("log_policy", true);
        root.put("is_multitask_pipeline", false);
        root.put("only_monitor_rank0", true);
        root.put("hook", hook);
        return root;
    }

    /**
     * Writes the effective config as {@code {exp}/config.yaml} (rank 0, at construction).
     *
     * @param effective the config to write
     * @param expDir    the experiment folder
     * @throws IllegalStateException naming the file if it cannot be written
     */
    static void writeEffective(final Config effective, final Path expDir)
    {
        final Path file = expDir.resolve("config.yaml");
        try
        {
            ConfigFiles.writeYaml(effective, file);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot write the effective config to " + file + ": " + ex.getMessage(),
                ex);
        }
    }
}
