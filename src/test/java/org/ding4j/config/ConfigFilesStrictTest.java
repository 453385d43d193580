package org.ding4j.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Config files and overrides that Jackson would read wrongly or that would hang or exhaust the JVM are refused,
 * each with the key (or the file) and the rule: duplicate keys, YAML aliases, several documents, an empty file,
 * anything but a regular file, a file over the size cap, an integer beyond 64 bits.
 */
class ConfigFilesStrictTest
{
    @TempDir
    Path dir;

    private String loadError(final String name, final String text) throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return assertThrows(ConfigException.class, () -> ConfigFiles.load(file)).getMessage();
    }

    @Test
    void shouldRefuseDuplicateKeysNamingTheKey() throws IOException
    {
        assertEquals("seed: config file " + dir.resolve("dup.yaml") + ": duplicate key seed (line 2)",
            loadError("dup.yaml", "seed: 1\nseed: 2\n"));
        assertEquals("policy.learn.batch_size: config file " + dir.resolve("dup.json")
            + ": duplicate key batch_size (line 1)",
            loadError("dup.json", "{\"policy\": {\"learn\": {\"batch_size\": 1, \"batch_size\": 3}}}"));
    }

    @Test
    void shouldRefuseYamlAliasesSeveralDocumentsAndEmptyFiles() throws IOException
    {
        assertEquals("policy.nstep: config file " + dir.resolve("alias.yaml")
            + ": YAML alias *n (line 3) is not supported; write the value out",
            loadError("alias.yaml", "a: &n 5\npolicy:\n  nstep: *n\n"));
        assertEquals("config file " + dir.resolve("multi.yaml")
            + " holds more than one document (line 3); expected one",
            loadError("multi.yaml", "seed: 1\n---\nseed: 2\n"));
        assertEquals("config file " + dir.resolve("empty.yaml") + " is empty: expected a map at the top",
            loadError("empty.yaml", "---\n"));
        assertEquals("config file " + dir.resolve("nothing.yaml") + " is empty: expected a map at the top",
            loadError("nothing.yaml", ""));
        // One line, where the problem is, without the parser's echo of the source.
        assertEquals("config file " + dir.resolve("tab.yaml") + " is not valid YAML: while scanning for the next "
            + "token found character '\\t(TAB)' that cannot start any token. (Do not use \\t(TAB) for indentation) "
            + "(line 2, column 1)", loadError("tab.yaml", "seed: 1\n\tpolicy: 2\n"));
        assertEquals("exp_name: expected a number, string, boolean, list or map, got a binary value (YAML !!binary)",
            loadError("binary.yaml", "exp_name: !!binary aGVsbG8=\n"));
        assertEquals("seed: expected an integer in [-9223372036854775808, 9223372036854775807], got "
            + "99999999999999999999", loadError("big.yaml", "seed: 99999999999999999999\n"));
    }

    @Test
    void shouldReadOnlyRegularFilesUpToTheCap() throws Exception
    {
        final Path fifo = dir.resolve("fifo.yaml");
        final Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertEquals(true, mkfifo.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, mkfifo.exitValue());
        assertEquals("config file " + fifo + " is not a regular file (a folder, FIFO or device)",
            assertThrows(ConfigException.class, () -> ConfigFiles.load(fifo)).getMessage(), "no hang on a FIFO");
        final Path folder = Files.createDirectory(dir.resolve("folder.yaml"));
        assertEquals("config file " + folder + " is not a regular file (a folder, FIFO or device)",
            assertThrows(ConfigException.class, () -> ConfigFiles.load(folder)).getMessage());
        final Path big = dir.resolve("big.yaml");
        Files.write(big, new byte[ConfigFiles.MAX_FILE_BYTES + 1]);
        assertEquals("config file " + big + " is larger than " + ConfigFiles.MAX_FILE_BYTES + " bytes",
            assertThrows(ConfigException.class, () -> ConfigFiles.load(big)).getMessage());
    }

    @Test
    void shouldCheckOverrideValuesTheSameWay()
    {
        assertEquals("seed: override value \"*x\": YAML alias *x (line 1) is not supported; write the value out",
            assertThrows(ConfigException.class, () -> ConfigFiles.override(Config.empty(), List.of("seed=*x")))
                .getMessage());
        assertEquals("policy.a: override value \"{a: 1, a: 2}\": duplicate key a (line 1)",
            assertThrows(ConfigException.class,
                () -> ConfigFiles.override(Config.empty(), List.of("policy={a: 1, a: 2}"))).getMessage());
        assertEquals("exp_name: override value has a line break: an override is one line (YAML would read \"a\\nb\" "
            + "as \"a b\"); put a multi-line value in the config file", assertThrows(ConfigException.class,
                () -> ConfigFiles.override(Config.empty(), List.of("exp_name=a\nb"))).getMessage());
        assertThrows(ConfigException.class, () -> ConfigFiles.override(Config.empty(), List.of("exp_name=a\u2028b")));
    }

    @Test
    void shouldSayHowToWriteDigitsOrABooleanAsText()
    {
        final Config over = ConfigFiles.override(Config.empty(), List.of("exp_name=123", "env.type=true"));
        assertEquals("exp_name: expected a string, got 123 (read as a number; quote it for text: \"123\")",
            assertThrows(ConfigException.class, () -> over.getString("exp_name")).getMessage());
        assertEquals("env.type: expected a string, got true (read as a boolean; quote it for text: \"true\")",
            assertThrows(ConfigException.class, () -> over.getString("env.type")).getMessage());
    }
}
