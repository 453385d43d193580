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
        if (first instanceof Error error)
        {
            throw error;
        }
        if (null != first)
        {
            throw (RuntimeException)first;
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

    /**
     * Closes {@code resource}; its failure becomes {@code first} (a checked one wrapped, so that later failures are
     * added to what is thrown), or is added to it as suppressed unless it is {@code first} itself (a close that
     * rethrows the failure being handled, as try-with-resources allows).
     */
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
                return ex instanceof RuntimeException || ex instanceof Error ? ex
                    : new IllegalStateException("close failed: " + ex, ex);
            }
            if (ex != first)
            {
                first.addSuppressed(ex);
            }
            return first;
        }
    }
}
