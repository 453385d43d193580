package org.ding4j.rl.dqn;

import org.ding4j.env.ResumableRandom;
import org.ding4j.policy.PriorityFeedback;
import org.ding4j.rl.pipeline.EnvValues;
import org.ding4j.rl.pipeline.Replay;

/**
 * A DQN replay buffer: a ring of {@code capacity} transitions in flat primitive arrays (observation, action, n-step
 * return, bootstrap factor, next observation), each stamped with a unique id (its push count), sampled uniformly
 * without replacement or, with {@code prioritized}, in proportion to {@code priority^alpha} (a {@link SumTree},
 * stratified as DI-engine's: one draw per equal slice of the total) with importance weights
 * {@code (N P(i))^-beta / max_j (N P(j))^-beta}. New transitions get the highest priority seen so far; priority
 * updates name the slot and the unique id it was sampled with, so a slot overwritten since is left alone.
 * <p>
 * Thread-safe (one lock): in parallel mode the collector pushes while the learner's loader samples. Sampling and
 * pushing allocate nothing.
 */
public final class ReplayBuffer implements Replay<DqnBatch>
{
    /** Added to every priority so that a zero TD error still leaves the sample a chance. */
    private static final double PRIORITY_EPS = 1e-6;

    private final int capacity;
    private final int obsWidth;
    private final boolean prioritized;
    private final double alpha;
    private final double beta;
    private final float[] obs;
    private final float[] nextObs;
    private final long[] action;
    private final float[] nstepReturn;
    private final float[] bootstrap;
    private final long[] uniqueId;
    private final SumTree tree;
    private final int[] drawnStamp;
    private final ResumableRandom random;
    private int stamp;
    private long pushed;
    private double maxPriority = 1.0;

    /**
     * @param capacity    transitions kept (the oldest is overwritten)
     * @param obsWidth    observation width
     * @param prioritized proportional prioritized sampling instead of uniform
     * @param alpha       priority exponent (prioritized only)
     * @param beta        importance-weight exponent (prioritized only)
     * @param seed        the sampling generator's seed
     */
    public ReplayBuffer(final int capacity, final int obsWidth, final boolean prioritized, final double alpha,
        final double beta, final long seed)
    {
        if (capacity < 1 || obsWidth < 1 || !(alpha >= 0) || !(beta >= 0))
        {
            throw new IllegalArgumentException("ReplayBuffer: expected capacity >= 1, obsWidth >= 1, alpha >= 0, "
                + "beta >= 0; got capacity=" + capacity + " obsWidth=" + obsWidth + " alpha=" + alpha + " beta="
                + beta);
        }
        this.capacity = capacity;
        this.obsWidth = obsWidth;
        this.prioritized = prioritized;
        this.alpha = alpha;
        this.beta = beta;
        obs = new float[capacity * obsWidth];
        nextObs = new float[capacity * obsWidth];
        action = new long[capacity];
        nstepReturn = new float[capacity];
        bootstrap = new float[capacity];
        uniqueId = new long[capacity];
        tree = prioritized ? new SumTree(capacity) : null;
        drawnStamp = new int[capacity];
        random = new ResumableRandom(seed);
    }

    /** @return the sampler's random state, for a checkpoint (the transitions are not saved, as in DI-engine) */
    public synchronized long randomState()
    {
        return random.state();
    }

    /** @param state from {@link #randomState()}: sampling continues that stream */
    public synchronized void restoreRandomState(final long state)
    {
        random.state(state);
    }

    /**
     * @param obsWidth observation width
     * @return heap bytes one transition takes here (its arrays, and the sum tree's share when prioritized), for
     *         checking a capacity against the heap before allocating it
     */
    public static long bytesPerTransition(final int obsWidth)
    {
        // obs + next obs (4 each per width), action and id (8 each), return, bootstrap, stamp (4 each), tree (16).
        return 8L * obsWidth + 8 + 8 + 4 + 4 + 4 + 16;
    }

    /**
     * Stores one transition, overwriting the oldest when full.
     *
     * @param obsRow      observation, {@code obsWidth} floats from {@code obsOffset}
     * @param obsOffset   where it starts
     * @param act         the action
     * @param ret         the n-step discounted return
     * @param boot        gamma^n, or 0 after a terminal step
     * @param nextRow     next observation, {@code obsWidth} floats from {@code nextOffset}
     * @param nextOffset  where it starts
     * @return the transition's unique id
     * @throws IllegalArgumentException naming a NaN or infinite return or observation (nothing is stored then)
     */
    public synchronized long push(final float[] obsRow, final int obsOffset, final long act, final float ret,
        final float boot, final float[] nextRow, final int nextOffset)
    {
        EnvValues.requireFinite("reward (n-step return)", ret, "transition", pushed);
        EnvValues.requireFinite("observation", obsRow, obsOffset, obsWidth, "transition", pushed);
        EnvValues.requireFinite("next observation", nextRow, nextOffset, obsWidth, "transition", pushed);
        final int slot = (int)(pushed % capacity);
        System.arraycopy(obsRow, obsOffset, obs, slot * obsWidth, obsWidth);
        System.arraycopy(nextRow, nextOffset, nextObs, slot * obsWidth, obsWidth);
        action[slot] = act;
        nstepReturn[slot] = ret;
        bootstrap[slot] = boot;
        uniqueId[slot] = pushed;
        if (prioritized)
        {
            tree.set(slot, Math.pow(maxPriority, alpha));
        }
        return pushed++;
    }

    /** @return transitions held now */
    @Override
    public synchronized int size()
    {
        return (int)Math.min(pushed, capacity);
    }

    /** @return transitions pushed in all */
    public synchronized long pushed()
    {
        return pushed;
    }

    /**
     * Fills a batch, DI-engine's {@code sample(batch_size)}: nothing happens while the buffer holds fewer
     * transitions than the batch.
     *
     * @param batch where the samples go (its size is the sample count)
     * @return whether the batch was filled
     */
    @Override
    public synchronized boolean sample(final DqnBatch batch)
    {
        final int n = batch.size();
        final int size = size();
        if (size < n)
        {
            return false;
        }
        if (prioritized)
        {
            samplePrioritized(batch, size);
        }
        else
        {
            sampleUniform(batch, size);
        }
        for (int i = 0; i < n; i++)
        {
            final int slot = batch.bufferIndex[i];
            System.arraycopy(obs, slot * obsWidth, batch.obs, i * obsWidth, obsWidth);
            System.arraycopy(nextObs, slot * obsWidth, batch.nextObs, i * obsWidth, obsWidth);
            batch.action[i] = action[slot];
            batch.nstepReturn[i] = nstepReturn[slot];
            batch.bootstrap[i] = bootstrap[slot];
            batch.uniqueId[i] = uniqueId[slot];
        }
        return true;
    }

    private void sampleUniform(final DqnBatch batch, final int size)
    {
        // Distinct slots by rejection against a stamp array: O(batch) expected while batch << size, no allocation.
        if (++stamp == 0)
        {
            java.util.Arrays.fill(drawnStamp, 0);
            stamp = 1;
        }
        for (int i = 0; i < batch.size(); i++)
        {
            int slot;
            do
            {
                slot = random.nextInt(size);
            }
            while (drawnStamp[slot] == stamp);
            drawnStamp[slot] = stamp;
            batch.bufferIndex[i] = slot;
            batch.weight[i] = 1f;
        }
    }

    private void samplePrioritized(final DqnBatch batch, final int size)
    {
        final int n = batch.size();
        final double total = tree.total();
        final double slice = total / n;
        final double maxWeight = Math.pow(size * tree.min() / total, -beta);
        for (int i = 0; i < n; i++)
        {
            final double mass = Math.min((i + random.nextDouble()) * slice, Math.nextDown(total));
            final int slot = Math.min(tree.find(mass), size - 1);
            batch.bufferIndex[i] = slot;
            batch.weight[i] = (float)(Math.pow(size * tree.get(slot) / total, -beta) / maxWeight);
        }
    }

    /**
     * Updates priorities from the learner's last reported ones ({@code learner.priorities()}).
     *
     * @param feedback priorities with the slots and unique ids they were sampled with (count -1: none)
     * @return how many were applied (a slot overwritten since it was sampled is skipped)
     */
    public synchronized int updatePriorities(final PriorityFeedback feedback)
    {
        if (!prioritized)
        {
            return 0;
        }
        int applied = 0;
        // Values and data items pair up by position (DI-engine's buffer zips them); extra ones of either are skipped.
        final int pairs = Math.min(feedback.count(), feedback.itemCount());
        for (int i = 0; i < pairs; i++)
        {
            applied += update(feedback.slot(i), feedback.id(i), feedback.value(i)) ? 1 : 0;
        }
        return applied;
    }

    /**
     * @param slot     the slot the sample came from
     * @param id       the unique id it was sampled with
     * @param priority its new priority (|TD error|), finite and >= 0
     * @return whether it was applied (false when the slot holds another transition by now)
     */
    public synchronized boolean update(final int slot, final long id, final double priority)
    {
        if (!(priority >= 0) || Double.isInfinite(priority))
        {
            throw new IllegalArgumentException("priority: expected a finite number >= 0, got " + priority
                + " for slot " + slot);
        }
        if (!prioritized || slot < 0 || slot >= capacity || uniqueId[slot] != id || id >= pushed)
        {
            return false;
        }
        final double p = priority + PRIORITY_EPS;
        maxPriority = Math.max(maxPriority, p);
        tree.set(slot, Math.pow(p, alpha));
        return true;
    }

    /** @return the sampling weight {@code priority^alpha} of a slot (prioritized only; for tests) */
    synchronized double weightOf(final int slot)
    {
        return tree.get(slot);
    }
}
