package org.ding4j.internal;

import java.util.List;

/**
 * Closes several resources so that one failing close leaves none of the others open: a user's env that throws in its
 * {@code close} must not keep a policy's native memory, a replay's buffers or another env's threads alive.
 */
public final class Closing
{
    private Closing()
    {
    }

    /**
     * Closes each in order, every one even when an earlier one fails.
     *
     * @param resources what to close, in order (null entries skipped)
     * @throws RuntimeException the first failure (a checked one wrapped), later ones added to it as suppressed
     */
    public static void all(final AutoCloseable... resources)
    {
        Throwable first = null;
        for (final AutoCloseable resource : resources)
        {
            first = close(resource, first);
        }
        if (null != first)
        {
            throw unchecked(first);
        }
    }

    /**
     * For a constructor that failed half-way: closes what it had made, the newest first.
     *
     * @param made    what was made so far, in order
     * @param failure the failure, which gets any close's failure as suppressed
     */
    public static void afterFailure(final List<? extends AutoCloseable> made, final Throwable failure)
    {
        for (int i = made.size() - 1; i >= 0; i--)
        {
            close(made.get(i), failure);
        }
    }

    /** Closes {@code resource}; its failure becomes {@code first}, or is added to it as suppressed. */
    private static Throwable close(final AutoCloseable resource, final Throwable first)
    {
        if (null == resource)
        {
            return first;
        }
        try
        {
            resource.close();
            return first;
        }
        catch (final Exception | Error ex)
        {
            if (null == first)
            {
                return ex;
            }
            first.addSuppressed(ex);
            return first;
        }
    }

    private static RuntimeException unchecked(final Throwable failure)
    {
        if (failure instanceof Error error)
        {
            throw error;
        }
        return failure instanceof RuntimeException runtime ? runtime
            : new IllegalStateException("close failed: " + failure, failure);
    }
}
