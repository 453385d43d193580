package org.ding4j.data;

/** A data loader thread failed; the cause is what the data source or collate threw. */
public final class DataLoaderException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param cause what the loader thread threw
     */
    public DataLoaderException(final Throwable cause)
    {
        super("data loader failed: " + cause, cause);
    }
}
