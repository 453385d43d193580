package org.ding4j.policy;

/**
 * The last update's priorities as the learner keeps them for the replay buffer: the priority values, and for each data
 * item of the batch the buffer slot and unique id it was drawn with. For the typed path both are one per sample; for
 * a map policy, as in DI-engine's {@code priority_info}, the ids are one per data item whatever number of values the
 * policy returned. The learner refills one instance in place on each update that reports priorities (no allocation
 * once its arrays are large enough); read it on the training thread between updates. {@link #count()} is -1 until an
 * update reports priorities.
 */
public final class PriorityFeedback
{
    private double[] values = new double[0];
    private int[] slots = new int[0];
    private long[] ids = new long[0];
    private int count = -1;
    private int itemCount;

    /**
     * Copies an update's priorities in, one value and one slot and id per sample.
     *
     * @param values priority per sample
     * @param slots  buffer slot per sample
     * @param ids    unique id per sample
     * @param count  how many are valid
     * @throws IllegalArgumentException if count is negative or an array is shorter than it
     */
    public void set(final double[] values, final int[] slots, final long[] ids, final int count)
    {
        set(values, count, slots, ids, count);
    }

    /**
     * Copies an update's priority values and its data items' slots and ids in.
     *
     * @param values     the priority values
     * @param valueCount how many values are valid
     * @param slots      buffer slot per data item
     * @param ids        unique id per data item
     * @param itemCount  how many data items are valid
     * @throws IllegalArgumentException if a count is negative or an array is shorter than its count
     */
    public void set(final double[] values, final int valueCount, final int[] slots, final long[] ids,
        final int itemCount)
    {
        if (valueCount < 0 || itemCount < 0 || values.length < valueCount || slots.length < itemCount
            || ids.length < itemCount)
        {
            throw new IllegalArgumentException("priorities: expected counts in [0, array lengths], got " + valueCount
                + " of " + values.length + " values, " + itemCount + " of " + slots.length + " slots and "
                + ids.length + " ids");
        }
        if (this.values.length < valueCount)
        {
            this.values = new double[valueCount];
        }
        if (this.slots.length < itemCount)
        {
            this.slots = new int[itemCount];
            this.ids = new long[itemCount];
        }
        System.arraycopy(values, 0, this.values, 0, valueCount);
        System.arraycopy(slots, 0, this.slots, 0, itemCount);
        System.arraycopy(ids, 0, this.ids, 0, itemCount);
        this.count = valueCount;
        this.itemCount = itemCount;
    }

    /** Forgets the priorities (count -1, item count 0). */
    public void clear()
    {
        count = -1;
        itemCount = 0;
    }

    /** @return how many priority values there are, or -1 when none were reported */
    public int count()
    {
        return count;
    }

    /** @return how many data items have a slot and an id (0 before the first report) */
    public int itemCount()
    {
        return itemCount;
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
     * @param i data item index, below {@link #itemCount()}
     * @return its {@code replay_buffer_idx}, or -1
     */
    public int slot(final int i)
    {
        return slots[i];
    }

    /**
     * @param i data item index, below {@link #itemCount()}
     * @return its {@code replay_unique_id}, or -1
     */
    public long id(final int i)
    {
        return ids[i];
    }
}
