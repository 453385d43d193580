package org.ding4j.config;

/**
 * A rule one config value must keep, beyond the type its default implies.
 */
@FunctionalInterface
public interface ValueRule
{
    /**
     * @param value the merged value
     * @return null if the value keeps the rule, else what was expected, e.g. "expected a positive integer"
     */
    String check(Object value);

    /** Integers (or whole doubles such as 1e9) > 0. */
    ValueRule POSITIVE_INTEGER = v -> isWhole(v) && ((Number)v).doubleValue() > 0 ? null : "expected a positive integer";

    /** Integers (or whole doubles) >= 0. */
    ValueRule NON_NEGATIVE_INTEGER =
        v -> isWhole(v) && ((Number)v).doubleValue() >= 0 ? null : "expected a non-negative integer";

    /** Non-empty strings. */
    ValueRule NON_EMPTY_STRING = v -> v instanceof String s && !s.isBlank() ? null : "expected a non-empty string";

    /** Finite numbers > 0. */
    ValueRule POSITIVE_NUMBER = v -> v instanceof Number n && n.doubleValue() > 0 && Double.isFinite(n.doubleValue())
        ? null : "expected a finite number > 0";

    private static boolean isWhole(final Object v)
    {
        if (v instanceof Long)
        {
            return true;
        }
        return v instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p63;
    }
}
