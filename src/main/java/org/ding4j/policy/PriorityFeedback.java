package org.ding4j.policy;

/**
 * The last update's priorities as the learner keeps them for the replay buffer: one value per sample with the
 * buffer slot and unique id it was drawn with. The learner refills one instance in place on each update that
 * reports priorities (no allocation once its arrays are large enough); read it on the training thread between
 * updates. {@link #count()} is -1 until an update reports priorities.
 */
public final class PriorityFeedback
{
    private double[] values = new double[0];
    private int[] slots = new int[0];
    private long[] ids = new long[0];
    private int count = -1;

    /**
     * Copies an update's priorities in.
     *
     * @param values priority per sample
     * @param slots  buffer slot per sample
     * @param ids    unique id per sample
     * @param count  how many are valid
     * @throws IllegalArgumentException if count is negative or an array is shorter than it
     */
    public void set(final double[] values, final int[] slots, final long[] ids, final int count)
    {
        if (count < 0 || values.length < count || slots.length < count || ids.length < count)
        {
            throw new IllegalArgumentException("priorities: expected count in [0, array lengths], got count " + count
                + " with " + values.length + " values, " + slots.length + " slots, " + ids.length + " ids");
        }
        if (this.values.length < count)
        {
            this.values = new double[count];
            this.slots = new int[count];
            this.ids = new long[count];
        }
        System.arraycopy(values, 0, this.values, 0, count);
        System.arraycopy(slots, 0, this.slots, 0, count);
        System.arraycopy(ids, 0, this.ids, 0, count);
        this.count = count;
    }

    /** Forgets the priorities (count -1). */
    public void clear()
    {
        count = -1;
    }

    /** @return how many samples have priorities, or -1 when none were reported */
    public int count()
    {
        return count;
    }

    /**
     * @param i sample index
     * @return its priority
     */
    public double value(final int i)
    {
        return values[i];
    }

    /**
     * @param i sample index
     * @return its {@code replay_buffer_idx}, or -1
     */
    public int slot(final int i)
    {
        return slots[i];
    }

    /**
     * @param i sample index
     * @return its {@code replay_unique_id}, or -1
     */
    public long id(final int i)
    {
        return ids[i];
    }
}
