package org.ding4j.dist;

/**
 * A collective or the rendezvous failed or timed out; the message names the operation, this rank and the world
 * size, so that the first line of a failed job's log says which step of which rank broke.
 */
public final class DistException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String operation;

    /**
     * @param operation what was being done (e.g. "allreduce gradients")
     * @param info      this rank's place
     * @param detail    what went wrong
     * @param cause     the native error, or null
     */
    public DistException(final String operation, final DistInfo info, final String detail, final Throwable cause)
    {
        super(operation + " failed on rank " + info.rank() + " of " + info.worldSize() + ": " + detail, cause);
        this.operation = operation;
    }

    /** @return the operation that failed */
    public String operation()
    {
        return operation;
    }
}
