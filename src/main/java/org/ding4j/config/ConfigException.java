package org.ding4j.config;

/**
 * A config value that breaks a rule: the message names the full key path, the value and the rule, e.g.
 * {@code learner.hook.save_ckpt_after_iter: expected a positive integer, got -5}; a problem no key stands for (a
 * config file that cannot be read) names its subject instead ({@link #withoutKey}).
 */
public final class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final String keyPath;
    private final String detail;

    /**
     * @param keyPath the full dotted key path ({@code ""}: the config's top level, shown as {@code <root>})
     * @param message what is wrong, after the path
     */
    public ConfigException(final String keyPath, final String message)
    {
        this(keyPath, message, null);
    }

    /**
     * @param keyPath the full dotted key path ({@code ""}: the config's top level, shown as {@code <root>})
     * @param message what is wrong, after the path
     * @param cause   the underlying failure, or null
     */
    public ConfigException(final String keyPath, final String message, final Throwable cause)
    {
        this(keyPath, message, cause, true);
    }

    private ConfigException(final String keyPath, final String message, final Throwable cause, final boolean keyed)
    {
        super(keyed ? (keyPath.isEmpty() ? "<root>" : keyPath) + ": " + message : message, cause);
        this.keyPath = keyPath;
        this.detail = message;
    }

    /**
     * A problem no key stands for (a config file that cannot be read, an override without {@code =}): the message
     * names its subject itself and is the whole message, with no key path before it.
     *
     * @param message what is wrong, naming the file or argument
     * @param cause   the underlying failure, or null
     * @return the exception, its key path empty
     */
    public static ConfigException withoutKey(final String message, final Throwable cause)
    {
        return new ConfigException("", message, cause, false);
    }

    /** @return the full dotted key path of the bad value ({@code ""} for the top level or no key) */
    public String keyPath()
    {
        return keyPath;
    }

    /** @return what is wrong, without the key path before it */
    public String detail()
    {
        return detail;
    }
}
