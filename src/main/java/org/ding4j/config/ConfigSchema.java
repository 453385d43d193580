package org.ding4j.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A component's {@code defaultConfig()} plus the rules its values keep. {@link #apply} deep-merges a user config
 * over the defaults and checks the result: an unknown key, a value whose type differs from its default's, or a
 * value that breaks a {@link ValueRule} fails at once with a {@link ConfigException} naming the full key path.
 * <p>
 * Sections marked open ({@link Builder#open}) accept keys the defaults lack, in them and in every section beneath
 * them (e.g. full-form hooks, or a component's own section that the component checks itself); their values are
 * merged as given, and keys the defaults have keep their types. Thread-safe (immutable).
 */
public final class ConfigSchema
{
    private final String root;
    private final Config defaults;
    private final Map<String, List<ValueRule>> rules;
    private final List<String> openSections;

    private ConfigSchema(final Builder builder)
    {
        this.root = builder.root;
        this.defaults = builder.defaults;
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(builder.rules));
        this.openSections = List.copyOf(builder.openSections);
        // The defaults must keep their own rules; a broken default is a bug here, not the user's.
        check(defaults, root);
    }

    /**
     * @param root     the path the component's config sits at in error messages (e.g. "learner"), "" for none
     * @param defaults the default tree
     * @return a builder
     */
    public static Builder builder(final String root, final Config defaults)
    {
        return new Builder(root, defaults);
    }

    /** @return the defaults */
    public Config defaults()
    {
        return defaults;
    }

    /**
     * Deep-merges a user config over the defaults and checks it.
     *
     * @param user the user's values (null or empty: the defaults)
     * @return the effective config
     * @throws ConfigException naming the first bad key
     */
    public Config apply(final Config user)
    {
        if (null == user)
        {
            return defaults;
        }
        final Config merged = merge(defaults, user, root);
        check(merged, root);
        return merged;
    }

    private Config merge(final Config base, final Config over, final String path)
    {
        Config result = base;
        for (final String key : over.keys())
        {
            final String keyPath = Config.join(path, key);
            final Object value = over.get(key);
            if (!base.has(key))
            {
                if (!isOpen(path))
                {
                    throw new ConfigException(keyPath, "unknown key (known keys: " + String.join(", ", base.keys())
                        + ")");
                }
                result = result.with(key, value);
                continue;
            }
            final Object defaultValue = base.get(key);
            if (value instanceof Config && !(defaultValue instanceof Config) && isOpen(path))
            {
                // In an open section a map may stand where the default is a plain value (a full-form hook under a
                // simplified key, as DI-engine allows); the section's owner checks it.
                result = result.with(key, value);
                continue;
            }
            result = result.with(key, mergeValue(keyPath, defaultValue, value));
        }
        return result;
    }

    /** A section is open if it, or a section above it, was marked open: the owner checks what lies beneath. */
    private boolean isOpen(final String path)
    {
        for (final String open : openSections)
        {
            if (open.isEmpty() || path.equals(open) || path.startsWith(open + "."))
            {
                return true;
            }
        }
        return false;
    }

    private Object mergeValue(final String keyPath, final Object defaultValue, final Object value)
    {
        if (defaultValue instanceof Config section)
        {
            if (!(value instanceof Config userSection))
            {
                throw new ConfigException(keyPath, "expected a section (map), got " + Config.describe(value));
            }
            return merge(section, userSection, keyPath);
        }
        if (null == defaultValue)
        {
            // A null default takes any value (null too): the key is optional, and its owner checks what it gets.
            return value;
        }
        // A typed default takes no null (YAML's empty `key:`), which would otherwise pass every check here and fail
        // only when the run reads the key, after its folder is made: "expected a number, got null" at once instead.
        final String expected = typeMismatch(defaultValue, value);
        if (null != expected)
        {
            throw new ConfigException(keyPath, expected + ", got " + Config.describe(value));
        }
        if (defaultValue instanceof Double && value instanceof Long l)
        {
            return l.doubleValue();
        }
        return value;
    }

    private static String typeMismatch(final Object defaultValue, final Object value)
    {
        if (defaultValue instanceof Long)
        {
            return value instanceof Long || (value instanceof Double d && d == Math.rint(d)) ? null
                : "expected an integer";
        }
        if (defaultValue instanceof Double)
        {
            return value instanceof Number ? null : "expected a number";
        }
        if (defaultValue instanceof Boolean)
        {
            return value instanceof Boolean ? null : "expected a boolean";
        }
        if (defaultValue instanceof String)
        {
            return value instanceof String ? null : "expected a string";
        }
        if (defaultValue instanceof List)
        {
            return value instanceof List ? null : "expected a list";
        }
        return null;
    }

    private void check(final Config merged, final String path)
    {
        for (final Map.Entry<String, List<ValueRule>> entry : rules.entrySet())
        {
            final String relative = entry.getKey();
            final Object value = lookup(merged, relative);
            if (null == value)
            {
                continue;
            }
            for (final ValueRule rule : entry.getValue())
            {
                final String problem = rule.check(value);
                if (null != problem)
                {
                    throw new ConfigException(Config.join(path, relative), problem + ", got " + Config.describe(value));
                }
            }
        }
    }

    private static Object lookup(final Config config, final String dottedKey)
    {
        Config node = config;
        final String[] parts = dottedKey.split("\\.");
        for (int i = 0; i < parts.length - 1; i++)
        {
            if (!node.has(parts[i]) || !(node.get(parts[i]) instanceof Config next))
            {
                return null;
            }
            node = next;
        }
        final String last = parts[parts.length - 1];
        return node.has(last) ? node.get(last) : null;
    }

    /** Collects the defaults, rules and open sections; {@link #build()} checks the defaults against the rules. */
    public static final class Builder
    {
        private final String root;
        private final Config defaults;
        private final Map<String, List<ValueRule>> rules = new LinkedHashMap<>();
        private final List<String> openSections = new ArrayList<>();

        private Builder(final String root, final Config defaults)
        {
            this.root = Objects.requireNonNull(root, "root");
            this.defaults = Objects.requireNonNull(defaults, "defaults");
        }

        /**
         * @param dottedKey path relative to the component's root
         * @param rule      what its value must keep
         * @return this
         */
        public Builder rule(final String dottedKey, final ValueRule rule)
        {
            rules.computeIfAbsent(dottedKey, k -> new ArrayList<>()).add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /**
         * @param dottedKey a section, relative to the root ("" for the root itself), that accepts unknown keys, as do
         *                  the sections beneath it
         * @return this
         */
        public Builder open(final String dottedKey)
        {
            openSections.add(dottedKey.isEmpty() ? root : Config.join(root, dottedKey));
            return this;
        }

        /**
         * @return the schema
         * @throws ConfigException if a default breaks a rule
         */
        public ConfigSchema build()
        {
            return new ConfigSchema(this);
        }
    }
}
