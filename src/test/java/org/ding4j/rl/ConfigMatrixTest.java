package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The config matrix, as a hostile or careless user would try it: every numeric key of an algorithm's effective
 * config, one at a time, set to 0, -1, NaN, infinity, 1e308, 2^31, a string and a list. Each is either accepted or
 * refused by a {@link ConfigException} that names that key; nothing else escapes the checks (no other exception,
 * no trace), and a refused value writes nothing (the checks run before any file is touched).
 */
class ConfigMatrixTest
{
    private static final List<Object> HOSTILE = List.of(0L, -1L, Double.NaN, Double.POSITIVE_INFINITY, 1e308,
        2147483648L, "seven", List.of(1L, 2L));

    @ParameterizedTest
    @ValueSource(strings = {"dqn", "td3", "sac", "ppo"})
    void everyNumericKeyTimesEveryHostileValueIsAcceptedOrRefusedByName(final String algorithm)
    {
        final Config base = Config.empty().with("policy.type", algorithm).with("exp_name", "matrix-never-written");
        final Config effective = new OffPolicyPipeline(base).config();
        final List<String> keys = new ArrayList<>();
        for (final String line : effective.settingLines().split("\n"))
        {
            final String key = line.substring(0, line.indexOf(": "));
            if (effective.get(key) instanceof Number)
            {
                keys.add(key);
            }
        }
        assertTrue(keys.size() > 20, "numeric keys: " + keys);
        int refused = 0;
        for (final String key : keys)
        {
            for (final Object value : HOSTILE)
            {
                try
                {
                    new OffPolicyPipeline(base.with(key, value));
                }
                catch (final ConfigException ex)
                {
                    refused++;
                    // The key itself, or (a rule across keys, named by another) its last two segments.
                    final String tail = key.substring(key.lastIndexOf('.', key.lastIndexOf('.') - 1) + 1);
                    assertTrue(ex.getMessage().startsWith(key + ": ") || ex.getMessage().contains(tail),
                        key + " = " + value + " was refused without naming the key: " + ex.getMessage());
                }
                catch (final RuntimeException ex)
                {
                    throw new AssertionError(key + " = " + value + " escaped the checks as " + ex, ex);
                }
            }
        }
        assertTrue(refused > keys.size() * 4, refused + " of " + keys.size() * HOSTILE.size() + " refused");
        assertTrue(!java.nio.file.Files.exists(java.nio.file.Path.of("matrix-never-written")), "nothing written");
    }

    /** The defaults themselves pass, with the keys the matrix varies. */
    @ParameterizedTest
    @ValueSource(strings = {"dqn", "td3", "sac", "ppo"})
    void theDefaultsPass(final String algorithm)
    {
        assertTrue(new OffPolicyPipeline(Config.of(Map.of("policy", Map.of("type", algorithm)))).config()
            .settingLines().contains("policy.type: \"" + algorithm + "\""));
    }
}
