package org.ding4j.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigSchemaTest
{
    private static final Config DEFAULTS = Config.of(Map.of(
        "train_iterations", 1_000_000_000L,
        "log_policy", true,
        "name", "learner",
        "lr", 1e-3,
        "hook", Map.of("log_show_after_iter", 100L, "load_ckpt_before_run", "")));

    private static final ConfigSchema SCHEMA = ConfigSchema.builder("learner", DEFAULTS)
        .rule("train_iterations", ValueRule.POSITIVE_INTEGER)
        .rule("hook.log_show_after_iter", ValueRule.POSITIVE_INTEGER)
        .rule("name", ValueRule.NON_EMPTY_STRING)
        .open("hook")
        .build();

    @Test
    void shouldDeepMergeOverTheDefaults()
    {
        final Config merged = SCHEMA.apply(Config.of(Map.of("hook", Map.of("log_show_after_iter", 20), "lr", 1)));
        assertEquals(20L, merged.getLong("hook.log_show_after_iter"));
        assertEquals("", merged.getString("hook.load_ckpt_before_run"), "untouched defaults stay");
        assertEquals(1.0, merged.get("lr"), "an integer for a double key becomes a double");
        assertEquals(1_000_000_000L, merged.getLong("train_iterations"));
        assertEquals(DEFAULTS, SCHEMA.apply(Config.empty()));
        assertEquals(1_000_000_000L, SCHEMA.apply(Config.of(Map.of("train_iterations", 1e9))).getLong("train_iterations"),
            "1e9 is a whole number");
    }

    @Test
    void shouldNameTheFullKeyPathOfEveryBadValue()
    {
        assertError("learner.hook.log_show_after_iter: expected a positive integer, got -5",
            Map.of("hook", Map.of("log_show_after_iter", -5)));
        assertError("learner.train_iterations: expected an integer, got \"many\"", Map.of("train_iterations", "many"));
        assertError("learner.train_iterations: expected an integer, got 2.5", Map.of("train_iterations", 2.5));
        assertError("learner.log_policy: expected a boolean, got 1", Map.of("log_policy", 1));
        assertError("learner.name: expected a non-empty string, got \"\"", Map.of("name", ""));
        assertError("learner.hook: expected a section (map), got 3", Map.of("hook", 3));
        assertError("learner.batch: unknown key (known keys: ", Map.of("batch", 3));
        // YAML's empty `lr:`: refused here, not when the run reads it after making its folder.
        assertError("learner.lr: expected a number, got null", java.util.Collections.singletonMap("lr", null));
        assertError("learner.hook.log_show_after_iter: expected an integer, got null",
            Map.of("hook", java.util.Collections.singletonMap("log_show_after_iter", null)));
    }

    @Test
    void shouldAcceptUnknownKeysInOpenSectionsOnly()
    {
        final Config merged = SCHEMA.apply(Config.of(Map.of("hook", Map.of("my_hook", Map.of("priority", 3)))));
        assertEquals(3L, merged.getLong("hook.my_hook.priority"));
        assertError("learner.extra: unknown key", Map.of("extra", Map.of("a", 1)));
    }

    @Test
    void shouldOpenEverySectionBeneathAnOpenOne()
    {
        final ConfigSchema outer = ConfigSchema.builder("", Config.of(Map.of("seed", 0L, "learner",
            Map.of("hook", Map.of("log_show_after_iter", 100L))))).open("learner").build();
        final Config merged = outer.apply(Config.of(Map.of("learner", Map.of("hook",
            Map.of("load_ckpt_before_run", "a.pth.tar")))));
        assertEquals("a.pth.tar", merged.getString("learner.hook.load_ckpt_before_run"));
        final ConfigException typed = assertThrows(ConfigException.class, () -> outer.apply(Config.of(Map.of(
            "learner", Map.of("hook", Map.of("log_show_after_iter", "often"))))));
        assertEquals("learner.hook.log_show_after_iter: expected an integer, got \"often\"", typed.getMessage(),
            "keys the defaults have keep their types");
        assertThrows(ConfigException.class, () -> outer.apply(Config.of(Map.of("seeds", 1L))));
    }

    @Test
    void shouldApplyDottedOverridesAsYamlValues()
    {
        final Config over = ConfigFiles.override(Config.empty(),
            List.of("hook.log_show_after_iter=20", "log_policy=false", "name=dqn", "extra.list=[1, 2]"));
        assertEquals(20L, over.get("hook.log_show_after_iter"));
        assertEquals(false, over.get("log_policy"));
        assertEquals("dqn", over.get("name"));
        assertEquals(List.of(1L, 2L), over.get("extra.list"));
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> ConfigFiles.override(Config.empty(), List.of("no_equals_sign")));
        assertEquals("override \"no_equals_sign\": expected key.path=value", ex.getMessage());
        for (final String nonFinite : List.of(".nan", ".inf", "-.inf", "+.Inf"))
        {
            assertEquals("policy.learn.learning_rate: expected a finite number, got " + nonFinite, assertThrows(
                ConfigException.class, () -> ConfigFiles.override(Config.empty(), List.of(
                "policy.learn.learning_rate=" + nonFinite))).getMessage());
        }
    }

    @Test
    void shouldLoadYamlAndJsonAndWriteTheEffectiveConfigBack(@TempDir final Path dir) throws IOException
    {
        final Path yaml = dir.resolve("c.yaml");
        Files.writeString(yaml, "hook:\n  log_show_after_iter: 7\ntrain_iterations: 1e3\n");
        final Config fromYaml = SCHEMA.apply(ConfigFiles.load(yaml));
        assertEquals(7L, fromYaml.getLong("hook.log_show_after_iter"));
        assertEquals(1000L, fromYaml.getLong("train_iterations"));

        final Path json = dir.resolve("c.json");
        Files.writeString(json, "{\"log_policy\": false}");
        assertEquals(false, SCHEMA.apply(ConfigFiles.load(json)).getBoolean("log_policy"));

        final Path written = dir.resolve("out/config.yaml");
        ConfigFiles.writeYaml(fromYaml, written);
        assertEquals(fromYaml, ConfigFiles.load(written), "the written config reads back as the same tree");

        final Path broken = dir.resolve("broken.yaml");
        Files.writeString(broken, "hook: [unclosed\n");
        final ConfigException ex = assertThrows(ConfigException.class, () -> ConfigFiles.load(broken));
        assertEquals(true, ex.getMessage().contains("broken.yaml is not valid YAML"), ex.getMessage());
        assertThrows(ConfigException.class, () -> ConfigFiles.load(dir.resolve("missing.yaml")));
    }

    private static void assertError(final String expectedPrefix, final Map<String, ?> user)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> SCHEMA.apply(Config.of(user)));
        assertEquals(true, ex.getMessage().startsWith(expectedPrefix),
            () -> "message \"" + ex.getMessage() + "\" does not start with " + expectedPrefix);
    }
}
