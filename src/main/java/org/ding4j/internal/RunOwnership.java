package org.ding4j.internal;

/**
 * Whether a pipeline's run owns an object (its policy): while it does, the object's {@code close} is refused. The run
 * updates and acts with the policy's native memory on its own threads, so a close from another thread (an
 * application holding the policy through {@code BaseLearner.policy()}) would free memory in use: a crash of the whole
 * process, not an exception. Only the run closes it, after its threads are done with it.
 */
public final class RunOwnership
{
    private volatile boolean owned;

    /** The run takes the object, once it is built into the run's parts. */
    public void take()
    {
        owned = true;
    }

    /** The run gives it up, before it closes it itself. */
    public void release()
    {
        owned = false;
    }

    /**
     * @param what the object, for the message
     * @throws IllegalStateException while a run owns it
     */
    public void checkClose(final String what)
    {
        if (owned)
        {
            throw new IllegalStateException(what + ": a pipeline's run owns it and closes it when the run ends; "
                + "closing it while the run trains or acts with it would free memory in use: stop the run (the "
                + "pipeline's stop() or BaseLearner.stop()) and let it close the policy");
        }
    }
}
