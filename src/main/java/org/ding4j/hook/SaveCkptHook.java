package org.ding4j.hook;

import org.ding4j.config.Config;

/**
 * {@code save_ckpt}: on rank 0, when {@code lastIter % freq == 0}, writes the learner's checkpoint
 * ({@link Checkpoints#save}) under {@link Checkpoints#nameOverride()} if set, else {@code iteration_{lastIter}.pth.tar}.
 * Since {@code lastIter} counts completed updates, {@code iteration_N} holds exactly N updates: a save due where the
 * policy has made later updates already ({@link HookContext#updatesAhead()}: a fused PPO call's minibatches) waits
 * for the last of them and is named by it, so a resume never counts an update twice.
 */
public final class SaveCkptHook extends LearnerHook
{
    private final long freq;
    /**
     * The iteration at which a due save is made: the one that catches up with the policy's weights when the save came
     * due while they were ahead (-1: none due). A call that ended early (a hook threw) never reaches it, and its save
     * is dropped rather than made later under a name that is not a multiple of the frequency.
     */
    private long dueAt = -1;

    /**
     * @param name     hook name
     * @param priority priority
     * @param position where it runs
     * @param extArgs  {@code freq}: save every this many iterations (default 1)
     * @throws IllegalArgumentException if freq is not a positive integer
     */
    public SaveCkptHook(final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        super(name, priority, position);
        this.freq = freq(extArgs);
    }

    @Override
    public void call(final HookContext context) throws java.io.IOException
    {
        if (0 != context.rank())
        {
            return;
        }
        final long iter = context.lastIter();
        // The iteration the policy's weights are at: the same for every iteration of one multi-update call.
        final long weightsAt = iter + context.updatesAhead();
        if (0 == iter % freq)
        {
            dueAt = weightsAt;
        }
        else if (dueAt != weightsAt)
        {
            // Not the call the save came due in (that one ended early).
            dueAt = -1;
        }
        if (iter != dueAt)
        {
            // Not due, or due while the weights are still ahead of iter.
            return;
        }
        dueAt = -1;
        final Checkpoints checkpoints = context.checkpoints();
        final String fileName = null != checkpoints.nameOverride() ? checkpoints.nameOverride()
            : "iteration_" + context.lastIter() + ".pth.tar";
        context.log().info(name() + ": save ckpt in " + checkpoints.save(fileName));
    }
}
