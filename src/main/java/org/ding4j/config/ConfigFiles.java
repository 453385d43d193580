package org.ding4j.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import org.ding4j.checkpoint.AtomicFiles;

/**
 * Reads configs from JSON or YAML files, applies dotted {@code key=value} overrides, and writes the effective
 * config as YAML (atomically). Reading is strict: only regular files of at most {@value #MAX_FILE_BYTES} bytes, one
 * document, no duplicate keys and no YAML aliases (Jackson would read an alias as its name, a wrong value), each
 * refused with the file and the key. Thread-safe.
 */
public final class ConfigFiles
{
    /** The largest config file read (configs are a few KB; a larger file is a mistake, e.g. a device). */
    public static final int MAX_FILE_BYTES = 1 << 20;

    private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '([^']*)'");
    /** Where SnakeYAML says a problem is, before it echoes the source: "in 'reader', line 2, column 1:". */
    private static final Pattern READER_MARK = Pattern.compile("^\\s*in 'reader', (line \\d+, column \\d+):?$");
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
            throw ConfigException.withoutKey("config file " + file + ": expected a .json, .yaml or .yml file", null);
        }
        if (!Files.exists(file))
        {
            throw ConfigException.withoutKey("config file " + file + " does not exist", null);
        }
        if (!Files.isRegularFile(file))
        {
            throw ConfigException.withoutKey(
                "config file " + file + " is not a regular file (a folder, FIFO or device)", null);
        }
        final byte[] bytes;
        try (InputStream in = Files.newInputStream(file))
        {
            // Read one byte past the cap, so a file that grew after a size check cannot slip through.
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
            if (bytes.length > MAX_FILE_BYTES)
            {
                throw ConfigException.withoutKey("config file " + file + " is larger than " + MAX_FILE_BYTES
                    + " bytes", null);
            }
        }
        catch (final NoSuchFileException ex)
        {
            throw ConfigException.withoutKey("config file " + file + " does not exist", ex);
        }
        catch (final IOException ex)
        {
            throw ConfigException.withoutKey("config file " + file + " cannot be read: " + ex.getMessage(), ex);
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
                throw ConfigException.withoutKey("embedded config " + resource + " is not on the class path", null);
            }
            return parse(YAML, in.readAllBytes(), "embedded config " + resource);
        }
        catch (final IOException ex)
        {
            throw ConfigException.withoutKey("embedded config " + resource + " cannot be read: " + ex.getMessage(),
                ex);
        }
    }

    private static Config parse(final ObjectMapper mapper, final byte[] bytes, final String what)
    {
        if (0 == checkStructure(mapper, bytes, what, ""))
        {
            throw ConfigException.withoutKey(what + " is empty: expected a map at the top", null);
        }
        final Object tree;
        try
        {
            tree = mapper.readValue(bytes, Object.class);
        }
        catch (final IOException ex)
        {
            throw notValid("", mapper, what, ex);
        }
        if (null == tree)
        {
            throw ConfigException.withoutKey(what + " is empty: expected a map at the top", null);
        }
        if (!(tree instanceof Map<?, ?> map))
        {
            throw ConfigException.withoutKey(
                what + ": expected a map at the top, got " + tree.getClass().getSimpleName(), null);
        }
        return Config.of(map);
    }

    /**
     * Walks the tokens once before the tree is built: a duplicate key, a YAML alias or a second document is an
     * error naming the key path (Jackson would keep the last duplicate, read an alias as its name and ignore the
     * documents after the first).
     */
    private static int checkStructure(final ObjectMapper mapper, final byte[] bytes, final String what,
        final String root)
    {
        try (JsonParser parser = mapper.getFactory().createParser(bytes))
        {
            parser.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            int depth = 0;
            int documents = 0;
            for (JsonToken token = parser.nextToken(); null != token; token = parser.nextToken())
            {
                if (0 == depth && ++documents > 1)
                {
                    throw problem(root, what + " holds more than one document (line "
                        + parser.currentLocation().getLineNr() + "); expected one", null);
                }
                if (parser instanceof YAMLParser yaml && yaml.isCurrentAlias())
                {
                    throw new ConfigException(under(root, keyPath(parser)), what + ": YAML alias *" + parser.getText()
                        + " (line " + parser.currentLocation().getLineNr() + ") is not supported; write the value out");
                }
                depth += token.isStructStart() ? 1 : token.isStructEnd() ? -1 : 0;
            }
            return documents;
        }
        catch (final JsonParseException ex)
        {
            final Matcher duplicate = DUPLICATE.matcher(String.valueOf(ex.getOriginalMessage()));
            if (duplicate.find())
            {
                final String parent = keyPath(ex.getProcessor());
                throw new ConfigException(under(root, parent.isEmpty() ? duplicate.group(1) : parent),
                    what + ": duplicate key "
                    + duplicate.group(1) + " (line " + ex.getLocation().getLineNr() + ")", ex);
            }
            throw notValid(root, mapper, what, ex);
        }
        catch (final IOException ex)
        {
            throw notValid(root, mapper, what, ex);
        }
    }

    private static ConfigException notValid(final String root, final ObjectMapper mapper, final String what,
        final IOException ex)
    {
        return problem(root, what + " is not valid " + (JSON == mapper ? "JSON" : "YAML") + ": " + oneLine(ex), ex);
    }

    /**
     * A parser's complaint on one line, with where it is: Jackson's message ends with an echo of the source and
     * SnakeYAML's adds a caret drawing, 8-12 lines on a console for one mistake.
     */
    private static String oneLine(final IOException ex)
    {
        final String text = ex instanceof JsonProcessingException json && null != json.getOriginalMessage()
            ? json.getOriginalMessage() : String.valueOf(ex.getMessage());
        final StringBuilder said = new StringBuilder();
        String where = null;
        for (final String line : text.split("\\R"))
        {
            final Matcher mark = READER_MARK.matcher(line);
            if (mark.find())
            {
                // The last one named is where the problem was found (the first, where the construct began).
                where = mark.group(1);
            }
            else if (!line.isBlank() && !Character.isWhitespace(line.charAt(0)))
            {
                // Indented lines are SnakeYAML's echo of the source and its caret.
                said.append(said.isEmpty() ? "" : " ").append(line.strip());
            }
        }
        if (null == where && ex instanceof JsonProcessingException json && null != json.getLocation()
            && json.getLocation().getLineNr() > 0)
        {
            where = "line " + json.getLocation().getLineNr() + ", column " + json.getLocation().getColumnNr();
        }
        return said + (null == where ? "" : " (" + where + ")");
    }

    /** A problem at a key, or, at the top ({@code root} empty: a whole file), one the message's subject names. */
    private static ConfigException problem(final String root, final String message, final Throwable cause)
    {
        return root.isEmpty() ? ConfigException.withoutKey(message, cause) : new ConfigException(root, message, cause);
    }

    private static String under(final String root, final String key)
    {
        return key.isEmpty() ? root : Config.join(root, key);
    }

    /** The dotted key path of the parser's current position, e.g. {@code policy.learn.batch_size}. */
    private static String keyPath(final JsonParser parser)
    {
        if (null == parser)
        {
            return "";
        }
        final String pointer = parser.getParsingContext().pathAsPointer().toString();
        return pointer.isEmpty() ? "" : pointer.substring(1).replace('/', '.');
    }

    /**
     * Applies {@code key.path=value} overrides in order; each value is read as YAML, so {@code 20} is an integer,
     * {@code true} a boolean, {@code [1, 2]} a list and {@code abc} a string.
     *
     * @param config    the tree to override
     * @param overrides the overrides
     * @return the new tree
     * @throws ConfigException if an override has no '=' or an empty key, or its value is not one line (YAML would
     *     fold a line break in a plain value to a space)
     */
    public static Config override(final Config config, final List<String> overrides)
    {
        Config result = config;
        for (final String override : overrides)
        {
            final int eq = override.indexOf('=');
            if (eq <= 0)
            {
                throw ConfigException.withoutKey("override \"" + override + "\": expected key.path=value", null);
            }
            final String key = override.substring(0, eq).trim();
            final String text = override.substring(eq + 1).trim();
            // YAML's line breaks: LF, CR, NEL, LS and PS.
            if (text.chars().anyMatch(c -> '\n' == c || '\r' == c || 0x85 == c || 0x2028 == c || 0x2029 == c))
            {
                throw new ConfigException(key, "override value has a line break: an override is one line (YAML "
                    + "would read \"a\\nb\" as \"a b\"); put a multi-line value in the config file");
            }
            final Object value;
            try
            {
                if (!text.isEmpty())
                {
                    checkStructure(YAML, text.getBytes(StandardCharsets.UTF_8), "override value \"" + text + "\"",
                        key);
                }
                value = text.isEmpty() ? "" : YAML.readValue(text, Object.class);
            }
            catch (final JsonProcessingException ex)
            {
                // YAML's own spellings of NaN and infinity, which no key accepts (a config holds finite numbers).
                if (text.matches("[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)"))
                {
                    throw new ConfigException(key, "expected a finite number, got " + text, ex);
                }
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
