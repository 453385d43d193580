package org.ding4j.torch;

import java.util.Arrays;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.pytorch.Tensor;

/**
 * PPO's update over a whole rollout in one native call ({@code native/ding4j_ppo.h}'s {@code ppo_update}): for each
 * minibatch of the caller's shuffled order, its rows gathered, advantages normalised, the actor's and critic's
 * forwards, the clipped surrogate, value loss and entropy bonus, their backward into the flat gradient buffer, the
 * global gradient-norm clip and one Adam step; each minibatch's losses and statistics kept for the caller to log as
 * an iteration of its own ({@link #stat}). Every matrix product is OpenBLAS's {@code cblas_sgemm}; the workspace is
 * sized once for the minibatch, and an update allocates nothing once its order and statistics buffers have grown to
 * the rollout.
 * <p>
 * The nets: an actor and a critic {@link Mlp} with Tanh between the layers, in one float32 CPU flat set whose names
 * are {@code actor.0.weight, actor.0.bias, actor.2.weight, ...}, {@code critic.0.weight, ...} and, for a Gaussian
 * head, {@code log_std}. The optimizer must be Adam (not AMSGrad) over that set; its step count advances here once
 * per minibatch, as {@link FusedOptimizer#step()} would, and its clipping is applied as there.
 * <p>
 * <b>Data parallel</b>: when the optimizer has a {@link GradientReducer}, each minibatch runs in two native calls and
 * its gradients are averaged across ranks between them. Not thread-safe.
 */
public final class FusedPpo implements AutoCloseable
{
    /** The statistics each minibatch leaves (the fields of the kernel's {@code ppo_detail::Stats}). */
    public enum Stat
    {
        /** The clipped surrogate loss. */
        POLICY_LOSS,
        /** Half the mean squared (optionally clipped) value error. */
        VALUE_LOSS,
        /** The policy's mean entropy (a Gaussian's, the same for every row). */
        ENTROPY,
        /** The mean of {@code (ratio - 1) - log ratio}. */
        APPROX_KL,
        /** The share of rows whose ratio left {@code [1 - clip, 1 + clip]}. */
        CLIP_FRACTION,
        /** The global gradient norm before clipping. */
        GRAD_NORM,
        /** {@code policy_loss + value_weight value_loss - entropy_weight entropy}. */
        TOTAL_LOSS
    }

    private static final int STAGE_ALL = 0;
    private static final int STAGE_GRADS = 1;
    private static final int STAGE_STEP = 2;
    private static final String[] ROLLOUT_NAMES = {"obs", "actions", "log_probs", "values", "advantages",
        "returns"};

    private final Layout layout;
    private final FusedAdam optimizer;
    private final Binding net;
    private final NativeOwner natives = new NativeOwner("FusedPpo");
    /** The kernel's arguments, field by field (ding4j::ppo_detail::Args). */
    private final NativeKernels.PpoArgs args;
    /** The view of args' Adam field, made once. */
    private final NativeKernels.AdamArgs adam;
    /** The last call's minibatch order and statistics, grown to the largest call (the old ones freed). */
    private IntPointer order;
    private NativeKernels.PpoStats stats;
    private int lastMinibatches;
    /** A discrete rollout's actions, read for their check. */
    private float[] actionRows;
    private long handle;

    /**
     * The nets' layout.
     *
     * @param discrete    a categorical head over {@code actions} choices, or a Gaussian of {@code actions} widths
     * @param minibatch   rows per minibatch (at least 2 with advantage normalisation: their standard deviation)
     * @param obs         observation width
     * @param actions     the action count or width
     * @param actorSizes  the actor's widths, obs to actions
     * @param criticSizes the critic's widths, obs to 1
     */
    public record Layout(boolean discrete, int minibatch, int obs, int actions, long[] actorSizes,
        long[] criticSizes)
    {
        /** Copies the arrays. */
        public Layout
        {
            actorSizes = actorSizes.clone();
            criticSizes = criticSizes.clone();
        }
    }

    /**
     * The loss's constants.
     *
     * @param clipRatio     the surrogate's (and the value clip's) epsilon, in (0, 1]
     * @param valueClip     whether the value loss takes the larger of the plain and the clipped value's error
     * @param valueWeight   the value loss's weight
     * @param entropyWeight the entropy bonus's weight
     * @param advantageNorm whether each minibatch's advantages are normalised
     */
    public record Loss(double clipRatio, boolean valueClip, double valueWeight, double entropyWeight,
        boolean advantageNorm)
    {
    }

    /** A rollout's tensors, checked once and held with their addresses. */
    public static final class Data
    {
        private final Binding tensors;
        private final int rows;
        /** The stored actions, for the check of a categorical head's indices. */
        private final FloatPointer actions;

        private Data(final FusedPpo owner, final int rows, final Tensor... t)
        {
            this.tensors = new Binding(owner, "FusedPpo", ROLLOUT_NAMES, t);
            this.rows = rows;
            this.actions = new FloatPointer(t[1].data_ptr());
        }

        /** @return the rollout's rows */
        public int rows()
        {
            return rows;
        }
    }

    /**
     * @param layout    the nets
     * @param loss      the loss's constants
     * @param params    actor, critic (and log_std) in one float32 CPU group
     * @param optimizer Adam over {@code params}
     * @throws IllegalArgumentException naming a size, parameter or constant that does not fit
     */
    public FusedPpo(final Layout layout, final Loss loss, final FlatParameters params, final FusedAdam optimizer)
    {
        this.layout = Objects.requireNonNull(layout, "layout");
        final long[] as = layout.actorSizes();
        final long[] cs = layout.criticSizes();
        if (layout.minibatch() < 1 || layout.obs() < 1 || layout.actions() < 1 || as.length < 2 || cs.length < 2
            || as[0] != layout.obs() || as[as.length - 1] != layout.actions() || cs[0] != layout.obs()
            || cs[cs.length - 1] != 1)
        {
            throw new IllegalArgumentException("FusedPpo: expected a minibatch, obs and actions >= 1, actor widths "
                + "from obs to actions, critic widths from obs to 1; got minibatch " + layout.minibatch() + ", obs "
                + layout.obs() + ", actions " + layout.actions() + ", actor " + Arrays.toString(as) + ", critic "
                + Arrays.toString(cs));
        }
        if (!(loss.clipRatio() > 0 && loss.clipRatio() <= 1))
        {
            throw new IllegalArgumentException("FusedPpo: clip ratio: expected a number in (0, 1], got "
                + loss.clipRatio());
        }
        if (loss.advantageNorm() && layout.minibatch() < 2)
        {
            throw new IllegalArgumentException("FusedPpo: advantage normalisation needs minibatches of 2 rows or more "
                + "(their standard deviation), got " + layout.minibatch());
        }
        Checks.nonNegativeFinite("FusedPpo: value weight", loss.valueWeight());
        Checks.nonNegativeFinite("FusedPpo: entropy weight", loss.entropyWeight());
        final long[] actor = Checks.layerOffsets("FusedPpo", params, "actor.", as, "actor");
        final long[] critic = Checks.layerOffsets("FusedPpo", params, "critic.", cs, "critic");
        final int logStd = params.names().indexOf("log_std");
        if (layout.discrete() != (logStd < 0) || (logStd >= 0
            && !Arrays.equals(new long[] {layout.actions()}, params.shape(logStd))))
        {
            throw new IllegalArgumentException("FusedPpo: " + (layout.discrete() ? "a categorical head takes no "
                + "log_std" : "a Gaussian head needs log_std of shape [" + layout.actions() + "]") + ", got "
                + (logStd < 0 ? "none" : Arrays.toString(params.shape(logStd))));
        }
        final long expected = numel(as) + numel(cs) + (logStd < 0 ? 0 : layout.actions());
        if (params.numel() != expected)
        {
            throw new IllegalArgumentException("FusedPpo: the parameters must be the actor, the critic" + (logStd < 0
                ? "" : " and log_std") + " alone (" + expected + " floats), got " + params.numel() + " in "
                + params.names());
        }
        Objects.requireNonNull(optimizer, "optimizer");
        if (optimizer.parameters() != params || optimizer.config().amsgrad())
        {
            throw new IllegalArgumentException("FusedPpo: the optimizer must be Adam (no AMSGrad) over the nets' "
                + "parameters");
        }
        this.optimizer = optimizer;
        net = new Binding(this, "FusedPpo", new String[] {"parameters", "gradients"}, params.group(0).values(),
            params.group(0).grads());
        args = natives.own(new NativeKernels.PpoArgs());
        adam = args.adam();
        args.clip_ratio(loss.clipRatio()).value_clip(loss.valueClip()).value_weight(loss.valueWeight())
            .entropy_weight(loss.entropyWeight()).adv_norm(loss.advantageNorm());
        // FusedAdam's states in its key order: exp_avg, then exp_avg_sq.
        args.exp_avg(optimizer.stateAddress(0, 0)).exp_avg_sq(optimizer.stateAddress(1, 0));
        final long[] dims = new long[6 + as.length + cs.length];
        dims[0] = layout.discrete() ? 1 : 0;
        dims[1] = layout.minibatch();
        dims[2] = layout.obs();
        dims[3] = layout.actions();
        dims[4] = as.length - 1;
        dims[5] = cs.length - 1;
        System.arraycopy(as, 0, dims, 6, as.length);
        System.arraycopy(cs, 0, dims, 6 + as.length, cs.length);
        final long[] offsets = Arrays.copyOf(actor, actor.length + critic.length + 2);
        System.arraycopy(critic, 0, offsets, actor.length, critic.length);
        offsets[offsets.length - 2] = logStd < 0 ? -1 : params.offset(logStd);
        offsets[offsets.length - 1] = params.numel();
        try (LongPointer d = new LongPointer(dims); LongPointer o = new LongPointer(offsets))
        {
            handle = NativeKernels.ppo_create(Natives.sgemmAddress(), d.address(), o.address());
        }
        if (0 == handle)
        {
            natives.close();
            throw new IllegalArgumentException("FusedPpo: the native kernel refused the layout (a size outside "
                + "[1, 2^24] or over 64 layers): actor " + Arrays.toString(as) + ", critic " + Arrays.toString(cs)
                + ", minibatch " + layout.minibatch());
        }
    }

    /** @return the weights and biases of an MLP of these widths */
    private static long numel(final long[] sizes)
    {
        long n = 0;
        for (int l = 0; l + 1 < sizes.length; l++)
        {
            n += (sizes[l] + 1) * sizes[l + 1];
        }
        return n;
    }

    /**
     * Checks and holds a rollout's tensors.
     *
     * @param obs        {@code [rows, obs]}
     * @param actions    {@code [rows, 1]} (the index, as a float) or {@code [rows, actions]}
     * @param logProbs   {@code [rows]} at collection
     * @param values     {@code [rows]} at collection
     * @param advantages {@code [rows]}
     * @param returns    {@code [rows]}
     * @return the binding to pass to {@link #update}
     * @throws IllegalArgumentException naming a tensor that is not contiguous CPU float32 of its shape, or rows that
     *     are not whole minibatches
     */
    public Data bind(final Tensor obs, final Tensor actions, final Tensor logProbs, final Tensor values,
        final Tensor advantages, final Tensor returns)
    {
        final long rows = null == obs || obs.isNull() || 2 != obs.dim() ? -1 : obs.size(0);
        if (rows < layout.minibatch() || 0 != rows % layout.minibatch() || rows > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("FusedPpo: obs must have whole minibatches of " + layout.minibatch()
                + " rows, got " + (null == obs || obs.isNull() ? "none" : Checks.describe(obs)));
        }
        Checks.floatRows("FusedPpo", obs, "obs", rows, layout.obs());
        Checks.floatRows("FusedPpo", actions, "actions", rows, layout.discrete() ? 1 : layout.actions());
        Checks.floatRows("FusedPpo", logProbs, "log_probs", rows, 0);
        Checks.floatRows("FusedPpo", values, "values", rows, 0);
        Checks.floatRows("FusedPpo", advantages, "advantages", rows, 0);
        Checks.floatRows("FusedPpo", returns, "returns", rows, 0);
        return new Data(this, (int)rows, obs, actions, logProbs, values, advantages, returns);
    }

    /**
     * Runs {@code order.length / minibatch} minibatches: minibatch j takes rows {@code order[j B .. (j + 1) B)} and
     * steps the optimizer once. Afterwards {@link #stat} gives each one's statistics.
     *
     * @param data  a rollout bound by this update
     * @param order rows of the rollout, each in {@code [0, rows)}, whole minibatches of them (an epoch's shuffle
     *              after another's)
     * @throws IllegalArgumentException if the order is not whole minibatches of valid rows, or a stored discrete
     *     action is not an action (naming its row; nothing has been applied)
     * @throws IllegalStateException if this update or its optimizer is closed, or the optimizer was made AMSGrad
     */
    public void update(final Data data, final int[] order)
    {
        final int minibatches = prepare(data, order);
        final GradientReducer reducer = optimizer.gradientReducer();
        // Counted first, as FusedOptimizer#step() counts: that also refuses a closed optimizer before the kernel
        // writes its moments. The kernel steps minibatch j with step + j.
        adam.set(optimizer.config(), optimizer.countNativeClippedStep("FusedPpo"));
        for (int j = 1; j < minibatches; j++)
        {
            optimizer.countNativeClippedStep("FusedPpo");
        }
        if (null == reducer)
        {
            NativeKernels.ppo_update(handle, args, stats, 0, minibatches, STAGE_ALL);
            return;
        }
        for (int j = 0; j < minibatches; j++)
        {
            NativeKernels.ppo_update(handle, args, stats, j, j + 1, STAGE_GRADS);
            reducer.reduce(optimizer.parameters());
            NativeKernels.ppo_update(handle, args, stats, j, j + 1, STAGE_STEP);
        }
    }

    /**
     * The gradients of one minibatch (rows {@code order[0 .. B)}) into the flat gradient buffer, without a step and
     * without counting one: what the checks against libtorch autograd compare. {@link #stat} of minibatch 0 gives its
     * losses ({@link Stat#GRAD_NORM} is NaN: no step computed it).
     *
     * @param data  a rollout bound by this update
     * @param order one minibatch of rows
     */
    public void gradients(final Data data, final int[] order)
    {
        if (order.length != layout.minibatch())
        {
            throw new IllegalArgumentException("FusedPpo: expected one minibatch of " + layout.minibatch()
                + " rows, got " + order.length);
        }
        prepare(data, order);
        NativeKernels.ppo_update(handle, args, stats, 0, 1, STAGE_GRADS);
    }

    private int prepare(final Data data, final int[] order)
    {
        if (0 == handle)
        {
            throw new IllegalStateException("FusedPpo is closed");
        }
        data.tensors.check(this);
        net.check(this);
        if (optimizer.config().amsgrad())
        {
            throw new IllegalStateException("FusedPpo: the optimizer is AMSGrad now (a loaded state dict?); the fused "
                + "update runs Adam");
        }
        final int b = layout.minibatch();
        if (0 == order.length || 0 != order.length % b)
        {
            throw new IllegalArgumentException("FusedPpo: order: expected whole minibatches of " + b + " rows, got "
                + order.length);
        }
        for (int i = 0; i < order.length; i++)
        {
            if (order[i] < 0 || order[i] >= data.rows)
            {
                throw new IllegalArgumentException("FusedPpo: order[" + i + "]: expected a row in [0, " + data.rows
                    + "), got " + order[i]);
            }
        }
        if (layout.discrete())
        {
            checkActions(data);
        }
        if (null == this.order || this.order.capacity() < order.length)
        {
            release(this.order);
            this.order = new IntPointer(order.length);
            this.order.retainReference();
        }
        this.order.put(order, 0, order.length);
        final int minibatches = order.length / b;
        if (null == stats || stats.capacity() < minibatches)
        {
            release(stats);
            stats = new NativeKernels.PpoStats(minibatches);
            stats.retainReference();
        }
        lastMinibatches = minibatches;
        args.params(net.address(0)).grads(net.address(1)).order(this.order.address())
            .obs(data.tensors.address(0)).action(data.tensors.address(1)).log_prob(data.tensors.address(2))
            .value(data.tensors.address(3)).advantage(data.tensors.address(4)).ret(data.tensors.address(5))
            .max_grad_norm(optimizer.maxGradNorm());
        return minibatches;
    }

    /** Every stored discrete action an index in {@code [0, actions)}: the kernel indexes the head's outputs by it. */
    private void checkActions(final Data data)
    {
        if (null == actionRows || actionRows.length < data.rows)
        {
            actionRows = new float[data.rows];
        }
        data.actions.get(actionRows, 0, data.rows);
        for (int r = 0; r < data.rows; r++)
        {
            final float a = actionRows[r];
            if (!(a >= 0 && a < layout.actions() && a == (int)a))
            {
                throw new IllegalArgumentException("FusedPpo: actions: row " + r + " of the rollout holds " + a
                    + ", expected an action index in [0, " + layout.actions() + ")");
            }
        }
    }

    /**
     * Frees a buffer this update holds a reference to (made while a caller's {@code PointerScope} may be open, which
     * would otherwise free it when the scope ends).
     */
    private static void release(final org.bytedeco.javacpp.Pointer pointer)
    {
        if (null != pointer)
        {
            pointer.releaseReference();
        }
    }

    /**
     * Runs each minibatch's actor and critic halves (their forwards and backwards) on two threads: the caller's and a
     * native helper thread this update owns, which spins for 0.5 ms after a half for the next and then sleeps, and
     * ends with {@link #close()}. The results are the same bits as on one thread. Keep OpenBLAS itself at one thread.
     *
     * @param threads 1 (the default) or 2
     * @throws IllegalArgumentException for another count
     * @throws IllegalStateException if closed
     */
    public void threads(final int threads)
    {
        Threads.checkUpdateThreads("FusedPpo: threads", threads);
        if (0 == handle)
        {
            throw new IllegalStateException("FusedPpo is closed");
        }
        NativeKernels.ppo_threads(handle, threads);
    }

    /** {@link #gae}'s flag of a step that ended its episode (terminated or truncated). */
    public static final byte ENDED = 1;
    /** {@link #gae}'s flag of a step that ended its episode in a terminal state (set with {@link #ENDED}). */
    public static final byte TERMINAL = 2;

    /**
     * GAE(lambda) over a rollout laid out step-major ({@code [steps][envs]}), in native code: delta = r + gamma
     * V(next) - V, where V(next) is 0 after a terminal step, the final observation's value after a truncated one, the
     * next step's value otherwise (the value after the rollout for its last step); A = delta + gamma lambda A(next),
     * cut where an episode ended; return = A + V.
     *
     * @param steps       steps per env
     * @param envs        envs
     * @param rewards     {@code [steps][envs]}
     * @param values      {@code [steps][envs]} values at collection
     * @param flags       {@code [steps][envs]}: {@link #ENDED}, with {@link #TERMINAL} too for a terminal state
     * @param truncValues the final observation's value where a step was truncated
     * @param lastValues  each env's value after the rollout
     * @param gamma       discount, in [0, 1]
     * @param lambda      GAE's lambda, in [0, 1]
     * @param advantages  receives {@code [steps][envs]}
     * @param returns     receives {@code [steps][envs]}
     * @throws IllegalArgumentException naming an array shorter than the rollout, or a discount out of range
     */
    public static void gae(final int steps, final int envs, final float[] rewards, final float[] values,
        final byte[] flags, final float[] truncValues, final float[] lastValues, final double gamma,
        final double lambda, final float[] advantages, final float[] returns)
    {
        final long rows = (long)steps * envs;
        if (steps < 1 || envs < 1 || rewards.length < rows || values.length < rows || flags.length < rows
            || truncValues.length < rows || lastValues.length < envs || advantages.length < rows
            || returns.length < rows)
        {
            throw new IllegalArgumentException("FusedPpo.gae: expected steps and envs >= 1 and arrays of steps x envs "
                + "= " + rows + " (lastValues: envs = " + envs + "), got steps " + steps + ", envs " + envs
                + ", rewards " + rewards.length + ", values " + values.length + ", flags " + flags.length
                + ", truncValues " + truncValues.length + ", lastValues " + lastValues.length + ", advantages "
                + advantages.length + ", returns " + returns.length);
        }
        if (!(gamma >= 0 && gamma <= 1 && lambda >= 0 && lambda <= 1))
        {
            throw new IllegalArgumentException("FusedPpo.gae: expected gamma and lambda in [0, 1], got gamma " + gamma
                + ", lambda " + lambda);
        }
        NativeKernels.ppo_gae(steps, envs, rewards, values, flags, truncValues, lastValues, gamma, lambda, advantages,
            returns);
    }

    /**
     * @param minibatch a minibatch of the last {@link #update} (0 for {@link #gradients})
     * @param which     the statistic
     * @return its value
     */
    public double stat(final int minibatch, final Stat which)
    {
        if (minibatch < 0 || minibatch >= lastMinibatches)
        {
            throw new IndexOutOfBoundsException("FusedPpo: minibatch " + minibatch + " of the last call's "
                + lastMinibatches);
        }
        final NativeKernels.PpoStats row = stats.position(minibatch);
        final double value = switch (which)
        {
            case POLICY_LOSS -> row.policy_loss();
            case VALUE_LOSS -> row.value_loss();
            case ENTROPY -> row.entropy();
            case APPROX_KL -> row.approx_kl();
            case CLIP_FRACTION -> row.clip_fraction();
            case GRAD_NORM -> row.grad_norm();
            case TOTAL_LOSS -> row.total_loss();
        };
        // The kernel takes the array from its start.
        stats.position(0);
        return value;
    }

    /** Frees the native workspace and the argument buffers. */
    @Override
    public void close()
    {
        if (0 != handle)
        {
            NativeKernels.ppo_free(handle);
            handle = 0;
        }
        release(order);
        release(stats);
        order = null;
        stats = null;
        natives.close();
    }
}
