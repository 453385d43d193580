package org.ding4j.checkpoint;

import java.util.List;
import java.util.Map;

/**
 * Typed reads of a saved state's fields (a resume's policy, pipeline and random-stream states), each refusal naming
 * the state, the key, the rule and what the file holds there: its kind, or that the key is missing and which keys
 * the state has. Never the state's whole contents, which a user cannot act on (and which may hold thousands of
 * values).
 */
public final class StateFields
{
    private StateFields()
    {
    }

    /**
     * @param what  the state, as the error names it (e.g. {@code "DQN state dict"})
     * @param state the state
     * @param key   the field
     * @return the field, a dict
     * @throws IllegalArgumentException naming what is there instead
     */
    public static Map<?, ?> section(final String what, final Map<?, ?> state, final String key)
    {
        if (!(state.get(key) instanceof Map<?, ?> section))
        {
            throw refused(what, state, key, "a dict");
        }
        return section;
    }

    /**
     * @param what  the state, as the error names it
     * @param state the state
     * @param key   the field
     * @return the field, an integer
     * @throws IllegalArgumentException naming what is there instead
     */
    public static long integer(final String what, final Map<?, ?> state, final String key)
    {
        if (!(state.get(key) instanceof Long value))
        {
            throw refused(what, state, key, "an integer");
        }
        return value;
    }

    /**
     * @param what  the state, as the error names it
     * @param state the state
     * @param key   the field
     * @return the field, a float ({@code -inf} and {@code inf} included; NaN is the caller's to refuse)
     * @throws IllegalArgumentException naming what is there instead
     */
    public static double number(final String what, final Map<?, ?> state, final String key)
    {
        if (!(state.get(key) instanceof Double value))
        {
            throw refused(what, state, key, "a float");
        }
        return value;
    }

    /**
     * @param what  the state, as the error names it
     * @param state the state
     * @param key   the field
     * @param count how many integers the list must hold, or -1 for any number
     * @return the field, a list of integers
     * @throws IllegalArgumentException naming what is there instead
     */
    public static long[] integers(final String what, final Map<?, ?> state, final String key, final int count)
    {
        if (!(state.get(key) instanceof List<?> list) || (count >= 0 && list.size() != count)
            || !list.stream().allMatch(Long.class::isInstance))
        {
            throw refused(what, state, key, "a list of " + (count >= 0 ? count + " " : "") + (1 == count ? "integer"
                : "integers"));
        }
        return list.stream().mapToLong(v -> (Long)v).toArray();
    }

    private static IllegalArgumentException refused(final String what, final Map<?, ?> state, final String key,
        final String rule)
    {
        return new IllegalArgumentException(what + ": '" + key + "': expected " + rule + ", got "
            + found(state, key));
    }

    /** @return what a state holds under a key: its kind, or that it is missing among the keys there */
    private static String found(final Map<?, ?> state, final String key)
    {
        final Object value = state.get(key);
        if (null == value)
        {
            return state.containsKey(key) ? "None" : "nothing (the state holds " + state.keySet() + ")";
        }
        if (value instanceof List<?> list)
        {
            final String plural = 1 == list.size() ? "" : "s";
            return "a list of " + list.size() + (list.stream().allMatch(Long.class::isInstance) ? " integer" + plural
                : " value" + plural + ", not all integers");
        }
        if (value instanceof Map<?, ?>)
        {
            return "a dict";
        }
        return value instanceof Long || value instanceof Double || value instanceof Boolean
            ? "the " + value.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT) + " " + value
            : "a " + value.getClass().getSimpleName();
    }
}
