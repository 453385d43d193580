package org.ding4j.learner;

/** DI-engine's {@code CountVar}: a counter the training thread updates and hooks read. Not thread-safe. */
public final class CountVar
{
    private long value;

    /** @param initial the starting value */
    public CountVar(final long initial)
    {
        this.value = initial;
    }

    /** @return the current value */
    public long val()
    {
        return value;
    }

    /** @param delta added to the value */
    public void add(final long delta)
    {
        value += delta;
    }

    /** @param newValue replaces the value */
    public void update(final long newValue)
    {
        value = newValue;
    }

    @Override
    public String toString()
    {
        return Long.toString(value);
    }
}
