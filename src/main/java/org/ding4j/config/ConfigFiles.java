package org.ding4j.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import org.ding4j.checkpoint.AtomicFiles;

/**
 * Reads configs from JSON or YAML files, applies dotted {@code key=value} overrides, and writes the effective
 * config as YAML (atomically). Thread-safe.
 */
public final class ConfigFiles
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
        .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
        .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    private ConfigFiles()
    {
    }

    /**
     * Loads a config file: {@code .json}, or {@code .yaml}/{@code .yml}.
     *
     * @param file the file
     * @return its tree
     * @throws ConfigException naming the file if it is missing, unreadable, malformed or not a map at the top
     */
    public static Config load(final Path file)
    {
        final String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        final ObjectMapper mapper;
        if (name.endsWith(".json"))
        {
            mapper = JSON;
        }
        else if (name.endsWith(".yaml") || name.endsWith(".yml"))
        {
            mapper = YAML;
        }
        else
        {
            throw new ConfigException("", "config file " + file + ": expected a .json, .yaml or .yml file");
        }
        final byte[] bytes;
        try
        {
            bytes = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            throw new ConfigException("", "config file " + file + " does not exist", ex);
        }
        catch (final IOException ex)
        {
            throw new ConfigException("", "config file " + file + " cannot be read: " + ex.getMessage(), ex);
        }
        return parse(mapper, bytes, "config file " + file);
    }

    /**
     * Loads a YAML config from the class path (an embedded default).
     *
     * @param resource the resource name, e.g. {@code org/ding4j/examples/cartpole_dqn.yaml}
     * @return its tree
     * @throws ConfigException naming the resource if it is missing or malformed
     */
    public static Config loadResource(final String resource)
    {
        try (java.io.InputStream in = ConfigFiles.class.getClassLoader().getResourceAsStream(resource))
        {
            if (null == in)
            {
                throw new ConfigException("", "embedded config " + resource + " is not on the class path");
            }
            return parse(YAML, in.readAllBytes(), "embedded config " + resource);
        }
        catch (final IOException ex)
        {
            throw new ConfigException("", "embedded config " + resource + " cannot be read: " + ex.getMessage(), ex);
        }
    }

    private static Config parse(final ObjectMapper mapper, final byte[] bytes, final String what)
    {
        final Object tree;
        try
        {
            tree = mapper.readValue(bytes, Object.class);
        }
        catch (final IOException ex)
        {
            throw new ConfigException("", what + " is not valid " + (JSON == mapper ? "JSON" : "YAML") + ": "
                + ex.getMessage(), ex);
        }
        if (null == tree)
        {
            return Config.empty();
        }
        if (!(tree instanceof Map<?, ?> map))
        {
            throw new ConfigException("", what + ": expected a map at the top, got " + tree.getClass().getSimpleName());
        }
        return Config.of(map);
    }

    /**
     * Applies {@code key.path=value} overrides in order; each value is read as YAML, so {@code 20} is an integer,
     * {@code true} a boolean, {@code [1, 2]} a list and {@code abc} a string.
     *
     * @param config    the tree to override
     * @param overrides the overrides
     * @return the new tree
     * @throws ConfigException if an override has no '=' or an empty key
     */
    public static Config override(final Config config, final List<String> overrides)
    {
        Config result = config;
        for (final String override : overrides)
        {
            final int eq = override.indexOf('=');
            if (eq <= 0)
            {
                throw new ConfigException("", "override \"" + override + "\": expected key.path=value");
            }
            final String key = override.substring(0, eq).trim();
            final String text = override.substring(eq + 1).trim();
            final Object value;
            try
            {
                value = text.isEmpty() ? "" : YAML.readValue(text, Object.class);
            }
            catch (final JsonProcessingException ex)
            {
                throw new ConfigException(key, "override value \"" + text + "\" is not valid YAML", ex);
            }
            result = result.with(key, value);
        }
        return result;
    }

    /**
     * @param config a tree
     * @return it as YAML text
     */
    public static String toYaml(final Config config)
    {
        try
        {
            return YAML.writeValueAsString(config.toMap());
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException("a config tree holds only YAML-writable values", ex);
        }
    }

    /**
     * Writes a tree as YAML, atomically.
     *
     * @param config the tree
     * @param file   where
     * @throws IOException if writing fails (the old file, if any, stays)
     */
    public static void writeYaml(final Config config, final Path file) throws IOException
    {
        AtomicFiles.write(file, toYaml(config).getBytes(StandardCharsets.UTF_8));
    }
}
