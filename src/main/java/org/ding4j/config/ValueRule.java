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
    ValueRule POSITIVE_INTEGER =
        v -> isWhole(v) && ((Number)v).doubleValue() > 0 ? null : "expected a positive integer";

    /** Integers (or whole doubles) >= 0. */
    ValueRule NON_NEGATIVE_INTEGER =
        v -> isWhole(v) && ((Number)v).doubleValue() >= 0 ? null : "expected a non-negative integer";

    /** Non-empty strings. */
    ValueRule NON_EMPTY_STRING = v -> v instanceof String s && !s.isBlank() ? null : "expected a non-empty string";

    /** Any finite number, integer or not (a stop value, a return). */
    ValueRule FINITE_NUMBER = v -> v instanceof Number n && Double.isFinite(n.doubleValue()) ? null
        : "expected a finite number";

    /** Finite numbers > 0. */
    ValueRule POSITIVE_NUMBER = v -> v instanceof Number n && n.doubleValue() > 0 && Double.isFinite(n.doubleValue())
        ? null : "expected a finite number > 0";

    /**
     * A learning rate: a finite number in (0, 1], and not 0 in float32 either (the kernels' type: 1e-320 is). Adam's
     * steps are about the learning rate in size whatever the gradient, so a rate above 1 (1e308, 2^31) turns the
     * weights non-finite within a few updates.
     */
    ValueRule LEARNING_RATE = v -> v instanceof Number n && (float)n.doubleValue() > 0 && n.doubleValue() <= 1
        ? null : "expected a learning rate in (0, 1] (and above 0 in float32)";

    /**
     * Integers in {@code [min, max]}: a count that sizes arrays, threads or tensors is bounded by what it can use,
     * so a huge value is refused with its key instead of overflowing or running out of memory later.
     *
     * @param min smallest allowed
     * @param max largest allowed
     * @return the rule, "expected an integer in [min, max]"
     */
    static ValueRule integerIn(final long min, final long max)
    {
        final String expected = "expected an integer in [" + min + ", " + max + "]";
        return v -> isWhole(v) && ((Number)v).doubleValue() >= min && ((Number)v).doubleValue() <= max
            ? null : expected;
    }

    /**
     * A folder path to write a run into: non-empty segments, none {@code .} or {@code ..}, no control characters,
     * and not inside the kernel's pseudo file systems ({@code /proc}, {@code /sys}, {@code /dev}).
     */
    ValueRule FOLDER_PATH = v -> {
        final String expected = "expected a folder path without empty, '.' or '..' segments, control characters or "
            + "/proc, /sys, /dev";
        if (!(v instanceof String s) || s.isBlank() || s.chars().anyMatch(Character::isISOControl))
        {
            return expected;
        }
        final String trimmed = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
        final String[] segments = (trimmed.startsWith("/") ? trimmed.substring(1) : trimmed).split("/", -1);
        for (final String segment : segments)
        {
            if (segment.isEmpty() || ".".equals(segment) || "..".equals(segment))
            {
                return expected;
            }
        }
        return trimmed.startsWith("/") && java.util.Set.of("proc", "sys", "dev").contains(segments[0]) ? expected
            : null;
    };

    private static boolean isWhole(final Object v)
    {
        if (v instanceof Long)
        {
            return true;
        }
        return v instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p63;
    }
}
