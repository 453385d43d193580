package org.ding4j.rl.ac;

import org.ding4j.env.ResumableRandom;
import org.ding4j.rl.pipeline.EnvValues;
import org.ding4j.rl.pipeline.Replay;

/**
 * A uniform replay buffer of continuous-action transitions: a ring of fixed capacity (the oldest transition goes
 * first), sampled with replacement from a {@link ResumableRandom} whose state a checkpoint keeps. Every value an
 * environment hands in is checked: a non-finite observation or reward is refused with its name and index before
 * it is stored, since one NaN in the buffer would reach every later update. Thread-safe (parallel mode's collector
 * thread pushes while the learner's thread samples); a lock nobody else holds costs the serial run next to nothing.
 */
public final class TransitionBuffer implements Replay<ControlBatch>
{
    private final int capacity;
    private final int obsWidth;
    private final int actionWidth;
    private final float[] obs;
    private final float[] action;
    private final float[] reward;
    private final float[] nextObs;
    private final float[] notDone;
    private final ResumableRandom random;
    private int size;
    private int next;
    private long pushed;

    /**
     * @param capacity    transitions kept
     * @param obsWidth    observation width
     * @param actionWidth action width
     * @param seed        the sampling stream's seed
     */
    public TransitionBuffer(final int capacity, final int obsWidth, final int actionWidth, final long seed)
    {
        if (capacity < 1 || obsWidth < 1 || actionWidth < 1)
        {
            throw new IllegalArgumentException("TransitionBuffer: expected capacity, obsWidth and actionWidth >= 1, "
                + "got " + capacity + ", " + obsWidth + ", " + actionWidth);
        }
        this.capacity = capacity;
        this.obsWidth = obsWidth;
        this.actionWidth = actionWidth;
        obs = new float[Math.multiplyExact(capacity, obsWidth)];
        action = new float[Math.multiplyExact(capacity, actionWidth)];
        reward = new float[capacity];
        nextObs = new float[Math.multiplyExact(capacity, obsWidth)];
        notDone = new float[capacity];
        random = new ResumableRandom(seed);
    }

    /**
     * @param obsWidth    observation width
     * @param actionWidth action width
     * @return the heap bytes one transition takes
     */
    public static long bytesPerTransition(final int obsWidth, final int actionWidth)
    {
        return 4L * (2L * obsWidth + actionWidth + 2);
    }

    /**
     * Stores one transition.
     *
     * @param o        observation array
     * @param oAt      its first index
     * @param a        action array ([-1, 1] per entry)
     * @param aAt      its first index
     * @param r        reward
     * @param next     next observation array
     * @param nextAt   its first index
     * @param terminal whether the next state is terminal (no bootstrap); a truncation is not
     * @throws IllegalArgumentException naming a non-finite observation, action or reward
     */
    public synchronized void push(final float[] o, final int oAt, final float[] a, final int aAt, final double r,
        final float[] next, final int nextAt, final boolean terminal)
    {
        EnvValues.requireFinite("reward", r, "transition", pushed);
        EnvValues.requireFinite("observation", o, oAt, obsWidth, "transition", pushed);
        EnvValues.requireFinite("next observation", next, nextAt, obsWidth, "transition", pushed);
        EnvValues.requireFinite("action", a, aAt, actionWidth, "transition", pushed);
        System.arraycopy(o, oAt, obs, this.next * obsWidth, obsWidth);
        System.arraycopy(a, aAt, action, this.next * actionWidth, actionWidth);
        System.arraycopy(next, nextAt, nextObs, this.next * obsWidth, obsWidth);
        reward[this.next] = (float)r;
        notDone[this.next] = terminal ? 0f : 1f;
        this.next = this.next + 1 == capacity ? 0 : this.next + 1;
        size = Math.min(capacity, size + 1);
        pushed++;
    }

    /**
     * Fills a batch with transitions drawn uniformly with replacement.
     *
     * @param batch the batch (its widths must be the buffer's)
     * @return false, leaving the batch as it was, while the buffer holds fewer transitions than the batch
     */
    @Override
    public synchronized boolean sample(final ControlBatch batch)
    {
        if (batch.obsWidth() != obsWidth || batch.actionWidth() != actionWidth)
        {
            throw new IllegalArgumentException("batch: expected widths obs " + obsWidth + " and action "
                + actionWidth + ", got " + batch.obsWidth() + " and " + batch.actionWidth());
        }
        if (size < batch.size())
        {
            return false;
        }
        for (int i = 0; i < batch.size(); i++)
        {
            final int j = random.nextInt(size);
            System.arraycopy(obs, j * obsWidth, batch.obs, i * obsWidth, obsWidth);
            System.arraycopy(action, j * actionWidth, batch.action, i * actionWidth, actionWidth);
            System.arraycopy(nextObs, j * obsWidth, batch.nextObs, i * obsWidth, obsWidth);
            batch.reward[i] = reward[j];
            batch.notDone[i] = notDone[j];
        }
        return true;
    }

    /** @return transitions held */
    @Override
    public synchronized int size()
    {
        return size;
    }

    /** @return transitions pushed since construction */
    public synchronized long pushed()
    {
        return pushed;
    }

    /** @return the sampling stream's state */
    public synchronized long randomState()
    {
        return random.state();
    }

    /** @param state a state from {@link #randomState()} */
    public synchronized void restoreRandomState(final long state)
    {
        random.state(state);
    }
}
