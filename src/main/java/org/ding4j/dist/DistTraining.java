package org.ding4j.dist;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.hook.LogReducer;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.NativeOwner;

/**
 * What makes a learner data-parallel, in one object: joins (or takes) a {@link DistGroup}, broadcasts rank 0's
 * parameters, averages gradients before every step ({@link GradientSync}), reduces the log values of every
 * iteration ({@link GroupLogReducer}) and, handed to {@code learner.distributed(...)}, makes the learner's
 * {@code run()} stop all ranks before the same update ({@link StopVote}: SIGTERM on one rank stops all, rank 0 writes
 * the interrupt checkpoint). Per update this costs the gradient buckets' sums and one for the log values, which
 * carries the vote for the next update too; a separate vote (2 floats) only before an update that some rank could
 * not promise data for. All are issued in the same order on every rank, and with 2 ranks all go by direct exchange
 * ({@link DistGroup}), one round trip each.
 * <p>
 * A failing rank closes its group on {@link #close()}, so its peers fail at their next collective (or within the
 * timeout if it hangs) with a {@link DistException} naming the collective; rank 0 then writes the exception
 * checkpoint from the learner's {@code run()}. Its native objects have one owner each (a caller's scope does not
 * free them).
 */
public final class DistTraining implements StopVote, AutoCloseable
{
    private final DistGroup group;
    private final boolean ownsGroup;
    private final List<GradientSync> syncs;
    private final List<DataParallel> parallels;
    private final GroupLogReducer reducer;
    private final NativeOwner natives = new NativeOwner("DistTraining");
    private final Tensor vote = natives.own(torch.zeros(2));
    private final FloatPointer voteData = new FloatPointer(vote.data_ptr());
    private final float[] voteStage = new float[2];
    private final Exchange voteExchange;

    private DistTraining(final DistGroup group, final boolean ownsGroup,
        final List<? extends FusedOptimizer<?>> optimizers, final List<List<Module>> autogradModules,
        final long bucketBytes)
    {
        this.group = group;
        this.ownsGroup = ownsGroup;
        final List<GradientSync> attached = new ArrayList<>();
        final List<DataParallel> reducers = new ArrayList<>();
        try
        {
            for (int i = 0; i < optimizers.size(); i++)
            {
                final List<Module> modules = i < autogradModules.size() ? autogradModules.get(i) : List.of();
                if (modules.isEmpty())
                {
                    attached.add(GradientSync.attach(group, optimizers.get(i), bucketBytes));
                }
                else
                {
                    reducers.add(DataParallel.attach(group, optimizers.get(i), modules,
                        new DataParallel.Options(bucketBytes, false, false)));
                }
            }
        }
        catch (final RuntimeException ex)
        {
            attached.forEach(GradientSync::close);
            reducers.forEach(DataParallel::close);
            throw ex;
        }
        this.syncs = List.copyOf(attached);
        this.parallels = List.copyOf(reducers);
        this.reducer = new GroupLogReducer(group);
        this.voteExchange = group.exchanges(vote.nbytes()) ? group.exchange(vote) : null;
    }

    /**
     * Joins the group of {@code info} and attaches the optimizer to it (rank 0's parameters are broadcast now);
     * hand the result to the learner ({@code learner.distributed(training)}) for the log reduce and the stop vote.
     *
     * @param info      this rank's place (from the environment: {@link DistInfo#fromEnvironment})
     * @param timeout   rendezvous and collective timeout
     * @param optimizer the policy's optimizer
     * @return the wiring; close it after training (closes the group)
     */
    public static DistTraining join(final DistInfo info, final Duration timeout, final FusedOptimizer<?> optimizer)
    {
        return join(info, timeout, optimizer, GradientSync.bytesOf(GradientSync.DEFAULT_BUCKET_MB));
    }

    /**
     * As {@link #join(DistInfo, Duration, FusedOptimizer)} with a gradient bucket size ({@code dist.bucket_mb}).
     *
     * @param info        this rank's place
     * @param timeout     rendezvous and collective timeout
     * @param optimizer   the policy's optimizer
     * @param bucketBytes gradient bucket size in bytes ({@link GradientSync}); 0 for one all-reduce after backward
     * @return the wiring; close it after training (closes the group)
     */
    public static DistTraining join(final DistInfo info, final Duration timeout, final FusedOptimizer<?> optimizer,
        final long bucketBytes)
    {
        return join(info, timeout, optimizer, bucketBytes, "");
    }

    /**
     * As {@link #join(DistInfo, Duration, FusedOptimizer, long)}, checking at the rendezvous that every rank runs
     * the same settings ({@link DistGroup#join(DistInfo, Duration, String)}).
     *
     * @param info        this rank's place
     * @param timeout     rendezvous and collective timeout
     * @param optimizer   the policy's optimizer
     * @param bucketBytes gradient bucket size in bytes; 0 for one all-reduce after backward
     * @param settings    one setting per line that every rank must share (the effective config's
     *                    {@code settingLines()}), "" for none
     * @return the wiring; close it after training (closes the group)
     */
    public static DistTraining join(final DistInfo info, final Duration timeout, final FusedOptimizer<?> optimizer,
        final long bucketBytes, final String settings)
    {
        return join(info, timeout, List.of(optimizer), bucketBytes, settings);
    }

    /**
     * As {@link #join(DistInfo, Duration, FusedOptimizer, long, String)} for a policy with several optimizers (TD3's
     * actor and critic, SAC's temperature too): each gets its own {@link GradientSync}, and rank 0's parameters of
     * every one are broadcast now, in list order (the same on every rank).
     *
     * @param info        this rank's place
     * @param timeout     rendezvous and collective timeout
     * @param optimizers  the policy's optimizers, in the order every rank gives them
     * @param bucketBytes gradient bucket size in bytes; 0 for one all-reduce after backward
     * @param settings    one setting per line that every rank must share, "" for none
     * @return the wiring; close it after training (closes the group)
     */
    public static DistTraining join(final DistInfo info, final Duration timeout,
        final List<? extends FusedOptimizer<?>> optimizers, final long bucketBytes, final String settings)
    {
        return join(info, timeout, optimizers, List.of(), bucketBytes, settings);
    }

    /**
     * As {@link #join(DistInfo, Duration, List, long, String)}, with the optimizers whose modules are given trained
     * through c10d's Reducer ({@link DataParallel}: their libtorch backward all-reduces buckets as it runs) instead
     * of a {@link GradientSync}.
     *
     * @param info            this rank's place
     * @param timeout         rendezvous and collective timeout
     * @param optimizers      the policy's optimizers, in the order every rank gives them
     * @param autogradModules per optimizer, its modules for the Reducer, or an empty list (or none) for GradientSync
     * @param bucketBytes     gradient bucket size in bytes; 0 for one bucket
     * @param settings        one setting per line that every rank must share, "" for none
     * @return the wiring; close it after training (closes the group)
     */
    public static DistTraining join(final DistInfo info, final Duration timeout,
        final List<? extends FusedOptimizer<?>> optimizers, final List<List<Module>> autogradModules,
        final long bucketBytes, final String settings)
    {
        final DistGroup group = DistGroup.join(info, timeout, settings);
        try
        {
            return new DistTraining(group, true, optimizers, autogradModules, bucketBytes);
        }
        catch (final RuntimeException ex)
        {
            group.close();
            throw ex;
        }
    }

    /**
     * Attaches the optimizer to a group the caller keeps (and closes).
     *
     * @param group     the process group
     * @param optimizer the policy's optimizer
     * @return the wiring; close it after training (the group stays open)
     */
    public static DistTraining attach(final DistGroup group, final FusedOptimizer<?> optimizer)
    {
        return new DistTraining(group, false, List.of(optimizer), List.of(),
            GradientSync.bytesOf(GradientSync.DEFAULT_BUCKET_MB));
    }

    @Override
    public int vote(final int local)
    {
        voteStage[0] = StopVote.END == local ? 1f : 0f;
        voteStage[1] = StopVote.SIGNAL == local ? 1f : 0f;
        voteData.put(voteStage);
        if (null != voteExchange)
        {
            voteExchange.sum("stop vote");
        }
        else
        {
            group.allReduceSum(vote, "stop vote");
        }
        voteData.get(voteStage);
        return voteStage[1] > 0 ? StopVote.SIGNAL : voteStage[0] > 0 ? StopVote.END : StopVote.CONTINUE;
    }

    @Override
    public void carry(final IntSupplier wish)
    {
        reducer.carryVote(wish);
    }

    @Override
    public int carried()
    {
        return reducer.takeVote();
    }

    /** Leaves the cause for the peers, unless it is itself a collective's failure (then a peer failed first). */
    @Override
    public void failed(final Throwable cause)
    {
        if (!(cause instanceof DistException))
        {
            group.reportFailure(cause.toString());
        }
    }

    /** @return the group */
    public DistGroup group()
    {
        return group;
    }

    /** @return the log reducer ({@code log_reduce}: one all-reduce of the iteration's log values) */
    public LogReducer logReducer()
    {
        return reducer;
    }

    /** @return the gradient syncs, one per optimizer not on a Reducer, in the order they were given */
    public List<GradientSync> gradientSyncs()
    {
        return syncs;
    }

    /** @return the optimizers' c10d Reducers (the autograd modules given to {@link #join}), in list order */
    public List<DataParallel> dataParallels()
    {
        return parallels;
    }

    @Override
    public void close()
    {
        if (null != voteExchange)
        {
            voteExchange.close();
        }
        reducer.close();
        syncs.forEach(GradientSync::close);
        parallels.forEach(DataParallel::close);
        natives.close();
        if (ownsGroup)
        {
            group.close();
        }
    }
}
