package org.ding4j.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * An immutable config tree: string keys in insertion order; values are nested {@code Config}s, unmodifiable lists,
 * {@link String}, {@link Long}, {@link Double}, {@link Boolean} or null. Every node knows its full dotted path, so
 * every error it raises names the key the user wrote.
 * <p>
 * Built once at start-up and read on the setup path, never on a hot path. Thread-safe (immutable).
 */
public final class Config
{
    private static final Config EMPTY = new Config("", Collections.emptyMap());

    private final String path;
    private final Map<String, Object> values;

    private Config(final String path, final Map<String, Object> values)
    {
        this.path = path;
        this.values = values;
    }

    /** @return the empty root config */
    public static Config empty()
    {
        return EMPTY;
    }

    /**
     * Builds a tree from plain maps, lists and scalars (what Jackson or a literal gives). Integral numbers become
     * {@link Long}, other numbers {@link Double}.
     *
     * @param map the root map
     * @return the immutable tree
     * @throws ConfigException if a key is not a non-empty string without dots, or a value is of another type
     */
    public static Config of(final Map<?, ?> map)
    {
        return of("", map);
    }

    static Config of(final String path, final Map<?, ?> map)
    {
        Objects.requireNonNull(map, "map");
        final Map<String, Object> values = new LinkedHashMap<>();
        for (final Map.Entry<?, ?> entry : map.entrySet())
        {
            if (!(entry.getKey() instanceof String key) || key.isEmpty() || key.contains("."))
            {
                throw new ConfigException(path, "expected keys that are non-empty strings without dots, got "
                    + (null == entry.getKey() ? "null" : "\"" + entry.getKey() + "\""));
            }
            values.put(key, normalise(join(path, key), entry.getValue()));
        }
        return new Config(path, Collections.unmodifiableMap(values));
    }

    static Object normalise(final String path, final Object value)
    {
        if (null == value || value instanceof String || value instanceof Boolean || value instanceof Long
            || value instanceof Double)
        {
            return value;
        }
        if (value instanceof Config config)
        {
            return config.path.equals(path) ? config : of(path, config.values);
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte)
        {
            return ((Number)value).longValue();
        }
        if (value instanceof java.math.BigInteger big)
        {
            if (big.bitLength() > 63)
            {
                throw new ConfigException(path, "expected an integer in [" + Long.MIN_VALUE + ", " + Long.MAX_VALUE
                    + "], got " + big);
            }
            return big.longValue();
        }
        if (value instanceof Number number)
        {
            return number.doubleValue();
        }
        if (value instanceof Map<?, ?> map)
        {
            return of(path, map);
        }
        if (value instanceof List<?> list)
        {
            final List<Object> copy = new ArrayList<>(list.size());
            for (int i = 0; i < list.size(); i++)
            {
                copy.add(normalise(path + "[" + i + "]", list.get(i)));
            }
            return Collections.unmodifiableList(copy);
        }
        throw new ConfigException(path, "expected a number, string, boolean, list or map, got a "
            + (value instanceof byte[] ? "binary value (YAML !!binary)" : value.getClass().getSimpleName()));
    }

    static String join(final String path, final String key)
    {
        return path.isEmpty() ? key : path + "." + key;
    }

    /** @return this node's full dotted path ("" for the root) */
    public String path()
    {
        return path;
    }

    /** @return the keys of this node, in order */
    public Set<String> keys()
    {
        return values.keySet();
    }

    /**
     * @param key a key of this node (no dots)
     * @return whether it is present
     */
    public boolean has(final String key)
    {
        return values.containsKey(key);
    }

    /**
     * The value at a dotted path below this node.
     *
     * @param dottedKey e.g. {@code hook.log_show_after_iter}
     * @return the value (a Config for a section)
     * @throws ConfigException if a part of the path is missing
     */
    public Object get(final String dottedKey)
    {
        Config node = this;
        final String[] parts = dottedKey.split("\\.", -1);
        for (int i = 0; i < parts.length - 1; i++)
        {
            node = node.child(parts[i]);
        }
        final String last = parts[parts.length - 1];
        if (!node.values.containsKey(last))
        {
            throw new ConfigException(join(node.path, last), "missing key");
        }
        return node.values.get(last);
    }

    /**
     * @param key a section key
     * @return the section
     * @throws ConfigException if it is missing or not a section
     */
    public Config child(final String key)
    {
        final Object value = get1(key);
        if (!(value instanceof Config config))
        {
            throw new ConfigException(join(path, key), "expected a section (map), got " + describe(value));
        }
        return config;
    }

    /**
     * @param dottedKey path of an integer value
     * @return it
     * @throws ConfigException if missing or not a whole number
     */
    public long getLong(final String dottedKey)
    {
        final Object value = get(dottedKey);
        if (value instanceof Long l)
        {
            return l;
        }
        if (value instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p63)
        {
            return d.longValue();
        }
        throw new ConfigException(join(path, dottedKey), "expected an integer, got " + describe(value));
    }

    /**
     * @param dottedKey path of an integer value that fits an int
     * @return it
     * @throws ConfigException if missing, not a whole number, or out of int range
     */
    public int getInt(final String dottedKey)
    {
        final long value = getLong(dottedKey);
        if (value != (int)value)
        {
            throw new ConfigException(join(path, dottedKey), "expected an integer within int range, got " + value);
        }
        return (int)value;
    }

    /**
     * @param dottedKey path of a number
     * @return it
     * @throws ConfigException if missing or not a number
     */
    public double getDouble(final String dottedKey)
    {
        final Object value = get(dottedKey);
        if (value instanceof Number number)
        {
            return number.doubleValue();
        }
        throw new ConfigException(join(path, dottedKey), "expected a number, got " + describe(value));
    }

    /**
     * @param dottedKey path of a boolean
     * @return it
     * @throws ConfigException if missing or not a boolean
     */
    public boolean getBoolean(final String dottedKey)
    {
        final Object value = get(dottedKey);
        if (value instanceof Boolean b)
        {
            return b;
        }
        throw new ConfigException(join(path, dottedKey), "expected a boolean, got " + describe(value));
    }

    /**
     * @param dottedKey path of a string
     * @return it
     * @throws ConfigException if missing or not a string
     */
    public String getString(final String dottedKey)
    {
        final Object value = get(dottedKey);
        if (value instanceof String s)
        {
            return s;
        }
        // A YAML or --set value of digits, true or false is read as a number or boolean: say how to make it text.
        final String hint = value instanceof Number || value instanceof Boolean ? " (read as a "
            + (value instanceof Boolean ? "boolean" : "number") + "; quote it for text: \"" + value + "\")" : "";
        throw new ConfigException(join(path, dottedKey), "expected a string, got " + describe(value) + hint);
    }

    /**
     * @param dottedKey path of a list
     * @return it (unmodifiable)
     * @throws ConfigException if missing or not a list
     */
    public List<Object> getList(final String dottedKey)
    {
        final Object value = get(dottedKey);
        if (value instanceof List<?> list)
        {
            return Collections.unmodifiableList(list);
        }
        throw new ConfigException(join(path, dottedKey), "expected a list, got " + describe(value));
    }

    /**
     * A copy with one value set at a dotted path, creating sections on the way.
     *
     * @param dottedKey where
     * @param value     what (plain maps and lists are converted)
     * @return the new tree
     * @throws ConfigException if a part of the path exists and is not a section
     */
    public Config with(final String dottedKey, final Object value)
    {
        final int dot = dottedKey.indexOf('.');
        final Map<String, Object> copy = new LinkedHashMap<>(values);
        if (dot < 0)
        {
            checkKey(dottedKey);
            copy.put(dottedKey, normalise(join(path, dottedKey), value));
        }
        else
        {
            final String head = dottedKey.substring(0, dot);
            checkKey(head);
            final Object existing = values.get(head);
            final Config section;
            if (null == existing)
            {
                section = new Config(join(path, head), Collections.emptyMap());
            }
            else if (existing instanceof Config config)
            {
                section = config;
            }
            else
            {
                throw new ConfigException(join(path, head), "expected a section to set "
                    + dottedKey.substring(dot + 1) + " in, got " + describe(existing));
            }
            copy.put(head, section.with(dottedKey.substring(dot + 1), value));
        }
        return new Config(path, Collections.unmodifiableMap(copy));
    }

    private void checkKey(final String key)
    {
        if (key.isEmpty())
        {
            throw new ConfigException(path, "empty key in a dotted path");
        }
    }

    private Object get1(final String key)
    {
        if (!values.containsKey(key))
        {
            throw new ConfigException(join(path, key), "missing key");
        }
        return values.get(key);
    }

    /** @return a deep mutable copy of plain maps and lists (for serialisers) */
    public Map<String, Object> toMap()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        values.forEach((k, v) -> map.put(k, plain(v)));
        return map;
    }

    /**
     * Every leaf of this tree as one {@code dotted.key: value} line (strings quoted), sorted by key: two configs
     * compare line by line, and the first line that differs names the key (ranks compare theirs at the rendezvous).
     *
     * @return the lines joined by newlines
     */
    public String settingLines()
    {
        final List<String> lines = new ArrayList<>();
        addLines(lines);
        Collections.sort(lines);
        return String.join("\n", lines);
    }

    private void addLines(final List<String> lines)
    {
        values.forEach((key, value) -> {
            if (value instanceof Config child)
            {
                child.addLines(lines);
            }
            else
            {
                lines.add(join(path, key) + ": " + (value instanceof String text ? "\"" + text + "\"" : value));
            }
        });
    }

    private static Object plain(final Object value)
    {
        if (value instanceof Config config)
        {
            return config.toMap();
        }
        if (value instanceof List<?> list)
        {
            final List<Object> copy = new ArrayList<>(list.size());
            list.forEach(v -> copy.add(plain(v)));
            return copy;
        }
        return value;
    }

    /**
     * @param value a config value
     * @return its type and value, for error messages
     */
    static String describe(final Object value)
    {
        if (null == value)
        {
            return "null";
        }
        if (value instanceof String s)
        {
            return "\"" + s + "\"";
        }
        if (value instanceof Config config)
        {
            return "a section " + config.values.keySet();
        }
        if (value instanceof List<?> list)
        {
            return "a list " + list;
        }
        return value.toString();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof Config other && values.equals(other.values);
    }

    @Override
    public int hashCode()
    {
        return values.hashCode();
    }

    @Override
    public String toString()
    {
        return toMap().toString();
    }
}
