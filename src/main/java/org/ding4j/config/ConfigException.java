package org.ding4j.config;

/**
 * A config value that breaks a rule: the message names the full key path, the value and the rule, e.g.
 * {@code learner.hook.save_ckpt_after_iter: expected a positive integer, got -5}.
 */
public final class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final String keyPath;

    /**
     * @param keyPath the full dotted key path
     * @param message what is wrong, after the path
     */
    public ConfigException(final String keyPath, final String message)
    {
        super((keyPath.isEmpty() ? "<root>" : keyPath) + ": " + message);
        this.keyPath = keyPath;
    }

    /**
     * @param keyPath the full dotted key path
     * @param message what is wrong, after the path
     * @param cause   the underlying failure
     */
    public ConfigException(final String keyPath, final String message, final Throwable cause)
    {
        super((keyPath.isEmpty() ? "<root>" : keyPath) + ": " + message, cause);
        this.keyPath = keyPath;
    }

    /** @return the full dotted key path of the bad value */
    public String keyPath()
    {
        return keyPath;
    }
}
