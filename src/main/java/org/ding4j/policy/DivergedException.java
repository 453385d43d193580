package org.ding4j.policy;

/**
 * An update's loss came out NaN or infinite: the weights it wrote are no longer a net, and every later update would
 * be NaN too. ding4j's policies throw it from the update that computed such a loss, so a run fails there (its
 * exception checkpoint saved, {@code summary.json} naming it) instead of training on until an env or an evaluation
 * happens to notice, and its best checkpoint stays the last good one.
 */
public final class DivergedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    private DivergedException(final String message)
    {
        super(message);
    }

    /**
     * @param algorithm the policy's name ({@code DQN})
     * @param name      the loss's log name ({@code total_loss})
     * @param value     its value in this update
     * @throws DivergedException naming both if the value is NaN or infinite
     */
    public static void requireFinite(final String algorithm, final String name, final double value)
    {
        if (!Double.isFinite(value))
        {
            throw new DivergedException(algorithm + " diverged: " + name + " is " + value + " (every later update "
                + "would be too; a lower learning rate or a gradient clip may help, or a checkpoint that held "
                + "non-finite optimizer state started it)");
        }
    }
}
