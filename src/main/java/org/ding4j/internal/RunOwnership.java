package org.ding4j.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who may close an object with native memory (a policy): while a pipeline's run owns it, its {@code close} is refused.
 * The run updates and acts with the policy's native memory on its own threads, so a close from another thread (an
 * application holding the policy through {@code BaseLearner.policy()}) would free memory in use: a crash of the whole
 * process, not an exception. Only the run closes it, after its threads are done with it. Whoever closes it, one close
 * frees it and every other does nothing, from any thread.
 */
public final class RunOwnership
{
    private static final int FREE = 0;
    private static final int OWNED = 1;
    private static final int CLOSED = 2;

    private final AtomicInteger state = new AtomicInteger(FREE);

    /** The run takes the object, once it is built into the run's parts. */
    public void take()
    {
        state.compareAndSet(FREE, OWNED);
    }

    /** The run gives it up, once its threads are done with it, before it closes it itself. */
    public void release()
    {
        state.compareAndSet(OWNED, FREE);
    }

    /**
     * @param owned the object this guards
     * @return a close that gives the object up and closes it: for the run's last close, after every part that reads
     *     its memory (an actor over its weights) is closed, so that no other thread's close can come first
     */
    public AutoCloseable releasing(final AutoCloseable owned)
    {
        return () ->
        {
            release();
            owned.close();
        };
    }

    /**
     * Called first by the object's {@code close}.
     *
     * @param what the object, for the message
     * @return true for the one close that frees the object; false when it is closed already
     * @throws IllegalStateException while a run owns it
     */
    public boolean startClose(final String what)
    {
        while (true)
        {
            final int now = state.get();
            if (OWNED == now)
            {
                throw new IllegalStateException(what + ": a pipeline's run owns it and closes it when the run ends; "
                    + "closing it while the run trains or acts with it would free memory in use: stop the run (the "
                    + "pipeline's stop() or BaseLearner.stop()) and let it close the policy");
            }
            if (CLOSED == now)
            {
                return false;
            }
            if (state.compareAndSet(FREE, CLOSED))
            {
                return true;
            }
        }
    }
}
