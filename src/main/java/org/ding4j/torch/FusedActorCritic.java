package org.ding4j.torch;

import java.util.Objects;

import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.pytorch.Tensor;

/**
 * A whole TD3 or SAC update in one native call ({@code native/ding4j_ac.h}'s {@code ac_update}): target actions,
 * twin target Q and the TD target, the twin critic loss, its backward and the critics' Adam step, the actor's
 * (reparameterised) action, Q of it through the updated critics, backward into the actor only, the actor's Adam
 * step, SAC's temperature step and the Polyak moves of the targets. Every matrix product is OpenBLAS's
 * {@code cblas_sgemm}; the workspace is sized once for the batch, and an update allocates nothing.
 * <p>
 * The nets are {@link Mlp}s with ReLU between the layers: the actor's parameters named as an {@code Mlp}'s
 * ({@code 0.weight, 0.bias, 2.weight, ...}), the critics' as two of them prefixed {@code q1.} and {@code q2.} in one
 * flat set. Each must be one float32 CPU group; the targets must have the same names and layout. The optimizers must
 * be plain Adam over those sets (no AMSGrad or clipping): their step counts advance here as
 * {@link FusedOptimizer#step()} would advance them, so their state dicts stay PyTorch's.
 * <p>
 * <b>Data parallel</b>: when the optimizers have {@link GradientReducer}s (a distributed run attaches one to each),
 * the update runs in three native calls, and each gradient is reduced before the Adam step that reads it: the
 * critics' gradients, then (after the critics' step and the actor's backward through them) the actor's and the
 * temperature's, then the actor's and the temperature's steps and the Polyak moves. Either every optimizer has a
 * reducer or none has. Not thread-safe.
 */
public final class FusedActorCritic implements AutoCloseable
{
    /** Which update the kernel runs. */
    public enum Kind
    {
        /** TD3: target smoothing noise in, delayed actor and target updates. */
        TD3,
        /** SAC: two standard normal draws in, a squashed Gaussian actor, an optional learned temperature. */
        SAC
    }

    // ac_update's stages.
    private static final int STAGE_ALL = 0;
    private static final int STAGE_CRITIC_GRADS = 1;
    private static final int STAGE_ACTOR_GRADS = 2;
    private static final int STAGE_STEPS = 3;
    private static final String[] BATCH_NAMES = {"obs", "action", "reward", "next_obs", "not_done", "noise",
        "noise2"};

    private final Kind kind;
    private final int batch;
    private final int obs;
    private final int act;
    private final FusedAdam actorOptimizer;
    private final FusedAdam criticOptimizer;
    private final FusedAdam alphaOptimizer;
    private final Binding nets;
    private final NativeOwner natives = new NativeOwner("FusedActorCritic");
    /** The kernel's arguments and statistics, field by field (ding4j::ac_detail::Args and Stats). */
    private final NativeKernels.AcArgs args;
    private final NativeKernels.AcStats stats;
    /** Views of args' three Adam fields, made once (an update allocates nothing). */
    private final NativeKernels.AdamArgs actorAdam;
    private final NativeKernels.AdamArgs criticAdam;
    private final NativeKernels.AdamArgs alphaAdam;
    private long handle;

    /**
     * A bound batch: the transitions and the update's noise, checked once and held (with their addresses).
     */
    public static final class Batch
    {
        private final Binding tensors;

        private Batch(final FusedActorCritic owner, final Tensor... t)
        {
            this.tensors = new Binding(owner, "FusedActorCritic", BATCH_NAMES, t);
        }
    }

    /**
     * The layout and hyper-parameters of one algorithm's nets.
     *
     * @param kind            TD3 or SAC
     * @param batch           samples per update
     * @param obs             observation width
     * @param act             action width
     * @param actorSizes      the actor's widths, obs to its output (act for TD3, 2 act for SAC)
     * @param criticSizes     each critic's widths, obs + act to 1
     * @param discount        gamma
     * @param tau             the Polyak weight of the online nets
     * @param targetEntropy   SAC's target entropy (ignored for TD3)
     */
    public record Layout(Kind kind, int batch, int obs, int act, long[] actorSizes, long[] criticSizes,
        double discount, double tau, double targetEntropy)
    {
        /** Copies the arrays. */
        public Layout
        {
            Objects.requireNonNull(kind, "kind");
            actorSizes = actorSizes.clone();
            criticSizes = criticSizes.clone();
        }
    }

    /**
     * @param layout          the nets' layout and the update's constants
     * @param actor           the actor's parameters
     * @param actorTarget     its target (TD3), or null (SAC)
     * @param actorOptimizer  Adam over {@code actor}
     * @param critic          both critics' parameters ({@code q1.*}, {@code q2.*})
     * @param criticTarget    their targets
     * @param criticOptimizer Adam over {@code critic}
     * @param logAlpha        SAC's one-element log temperature (null for TD3)
     * @param alphaOptimizer  Adam over it when alpha is learned, else null
     * @throws IllegalArgumentException naming a parameter or size that does not fit the layout
     */
    public FusedActorCritic(final Layout layout, final FlatParameters actor, final FlatParameters actorTarget,
        final FusedAdam actorOptimizer, final FlatParameters critic, final FlatParameters criticTarget,
        final FusedAdam criticOptimizer, final FlatParameters logAlpha, final FusedAdam alphaOptimizer)
    {
        this.kind = layout.kind();
        this.batch = layout.batch();
        this.obs = layout.obs();
        this.act = layout.act();
        final long[] as = layout.actorSizes();
        final long[] cs = layout.criticSizes();
        final boolean sac = Kind.SAC == kind;
        if (batch < 1 || obs < 1 || act < 1 || as.length < 2 || cs.length < 2 || as[0] != obs
            || as[as.length - 1] != (sac ? 2L : 1L) * act || cs[0] != obs + act || cs[cs.length - 1] != 1
            || (sac ? null != actorTarget || null == logAlpha : null == actorTarget))
        {
            throw new IllegalArgumentException("FusedActorCritic: expected batch, obs, act >= 1, actor widths from "
                + "obs to " + (sac ? "2 act" : "act") + ", critic widths from obs + act to 1" + (sac
                ? ", no actor target and a log alpha" : ", an actor target") + "; got batch " + batch + ", obs " + obs
                + ", act " + act + ", actor " + java.util.Arrays.toString(as) + ", critic "
                + java.util.Arrays.toString(cs));
        }
        final long[] actorOffsets = Checks.layerOffsets("FusedActorCritic", actor, "", as, "actor");
        final long[] q1 = Checks.layerOffsets("FusedActorCritic", critic, "q1.", cs, "critic");
        final long[] q2 = Checks.layerOffsets("FusedActorCritic", critic, "q2.", cs, "critic");
        sameLayout(actor, actorTarget, "actor target");
        sameLayout(critic, criticTarget, "critic target");
        this.actorOptimizer = optimizerOf(actorOptimizer, actor, "actor");
        this.criticOptimizer = optimizerOf(criticOptimizer, critic, "critic");
        this.alphaOptimizer = null == alphaOptimizer ? null : optimizerOf(alphaOptimizer, logAlpha, "log alpha");
        if (null != logAlpha && 1 != Checks.singleCpuFloatGroup(logAlpha, "FusedActorCritic: log alpha").numel())
        {
            throw new IllegalArgumentException("FusedActorCritic: log alpha must have one element, got "
                + logAlpha.numel());
        }
        final Tensor none = null;
        nets = new Binding(this, "FusedActorCritic", new String[] {"actor", "actor grads", "actor target", "critic",
            "critic grads", "critic target", "log alpha", "log alpha grads"},
            actor.group(0).values(), actor.group(0).grads(), null == actorTarget ? none : actorTarget.group(0).values(),
            critic.group(0).values(), critic.group(0).grads(), criticTarget.group(0).values(),
            null == logAlpha ? none : logAlpha.group(0).values(), null == logAlpha ? none : logAlpha.group(0).grads());
        args = natives.own(new NativeKernels.AcArgs());
        stats = natives.own(new NativeKernels.AcStats());
        actorAdam = args.actor_adam();
        criticAdam = args.critic_adam();
        alphaAdam = args.alpha_adam();
        Checks.nonNegativeFinite("discount", layout.discount());
        if (!(layout.tau() >= 0 && layout.tau() <= 1) || layout.discount() > 1)
        {
            throw new IllegalArgumentException("FusedActorCritic: expected discount and tau in [0, 1], got discount "
                + layout.discount() + ", tau " + layout.tau());
        }
        args.gamma(layout.discount()).tau(layout.tau()).target_entropy(layout.targetEntropy())
            .auto_alpha(null != alphaOptimizer);
        // FusedAdam's states in its key order: exp_avg, then exp_avg_sq.
        args.actor_exp_avg(this.actorOptimizer.stateAddress(0, 0))
            .actor_exp_avg_sq(this.actorOptimizer.stateAddress(1, 0))
            .critic_exp_avg(this.criticOptimizer.stateAddress(0, 0))
            .critic_exp_avg_sq(this.criticOptimizer.stateAddress(1, 0));
        if (null != this.alphaOptimizer)
        {
            args.alpha_exp_avg(this.alphaOptimizer.stateAddress(0, 0))
                .alpha_exp_avg_sq(this.alphaOptimizer.stateAddress(1, 0));
        }
        final long[] dims = new long[6 + as.length + cs.length];
        dims[0] = kind.ordinal();
        dims[1] = batch;
        dims[2] = obs;
        dims[3] = act;
        dims[4] = as.length - 1;
        dims[5] = cs.length - 1;
        System.arraycopy(as, 0, dims, 6, as.length);
        System.arraycopy(cs, 0, dims, 6 + as.length, cs.length);
        final long[] all = new long[actorOffsets.length + q1.length + q2.length];
        System.arraycopy(actorOffsets, 0, all, 0, actorOffsets.length);
        System.arraycopy(q1, 0, all, actorOffsets.length, q1.length);
        System.arraycopy(q2, 0, all, actorOffsets.length + q1.length, q2.length);
        try (LongPointer d = new LongPointer(dims); LongPointer o = new LongPointer(all))
        {
            handle = NativeKernels.ac_create(Natives.sgemmAddress(), d.address(), o.address());
        }
        if (0 == handle)
        {
            natives.close();
            throw new IllegalArgumentException("FusedActorCritic: the native kernel refused the layout (a size "
                + "outside [1, 2^24] or over 64 layers): actor " + java.util.Arrays.toString(as) + ", critic "
                + java.util.Arrays.toString(cs) + ", batch " + batch);
        }
    }

    private static void sameLayout(final FlatParameters online, final FlatParameters target, final String what)
    {
        if (null == target)
        {
            return;
        }
        Checks.singleCpuFloatGroup(target, "FusedActorCritic: the " + what);
        boolean same = online.names().equals(target.names()) && online.numel() == target.numel();
        for (int i = 0; same && i < online.size(); i++)
        {
            same = online.offset(i) == target.offset(i);
        }
        if (!same)
        {
            throw new IllegalArgumentException("FusedActorCritic: the " + what + " must have the online net's names "
                + "and layout, got " + target.names());
        }
    }

    private static FusedAdam optimizerOf(final FusedAdam optimizer, final FlatParameters params, final String what)
    {
        Objects.requireNonNull(optimizer, what + " optimizer");
        if (optimizer.parameters() != params || optimizer.config().amsgrad() || optimizer.maxGradNorm() > 0)
        {
            throw new IllegalArgumentException("FusedActorCritic: the " + what + " optimizer must be plain Adam (no "
                + "AMSGrad, no clipping) over the " + what + "'s parameters");
        }
        return optimizer;
    }

    /**
     * Checks and holds a batch's tensors.
     *
     * @param obsT     {@code [B, obs]}
     * @param action   {@code [B, act]}
     * @param reward   {@code [B]}
     * @param nextObs  {@code [B, obs]}
     * @param notDone  {@code [B]}
     * @param noise    {@code [B, act]}: TD3's clipped smoothing noise, or SAC's N(0, 1) draws for the next state
     * @param noise2   {@code [B, act]}: SAC's N(0, 1) draws for the current state (null for TD3)
     * @return the binding to pass to {@link #update}
     * @throws IllegalArgumentException naming a tensor that is not contiguous float32 on the CPU of that shape
     */
    public Batch bind(final Tensor obsT, final Tensor action, final Tensor reward, final Tensor nextObs,
        final Tensor notDone, final Tensor noise, final Tensor noise2)
    {
        Checks.floatRows("FusedActorCritic", obsT, "obs", batch, obs);
        Checks.floatRows("FusedActorCritic", action, "action", batch, act);
        Checks.floatRows("FusedActorCritic", reward, "reward", batch, 0);
        Checks.floatRows("FusedActorCritic", nextObs, "next_obs", batch, obs);
        Checks.floatRows("FusedActorCritic", notDone, "not_done", batch, 0);
        Checks.floatRows("FusedActorCritic", noise, "noise", batch, act);
        if (Kind.SAC == kind)
        {
            Checks.floatRows("FusedActorCritic", noise2, "noise2", batch, act);
        }
        else if (null != noise2)
        {
            throw new IllegalArgumentException("FusedActorCritic: TD3 takes one noise tensor, got noise2 too");
        }
        return new Batch(this, obsT, action, reward, nextObs, notDone, noise, noise2);
    }

    /**
     * Runs one update.
     *
     * @param b         a batch bound by this update
     * @param actorTurn TD3: whether this update steps the actor and the targets (SAC: always)
     */
    public void update(final Batch b, final boolean actorTurn)
    {
        if (0 == handle)
        {
            throw new IllegalStateException("FusedActorCritic is closed");
        }
        b.tensors.check(this);
        nets.check(this);
        checkReducers();
        final boolean actorSteps = Kind.SAC == kind || actorTurn;
        args.actor(nets.address(0)).actor_grad(nets.address(1)).actor_target(nets.address(2))
            .critic(nets.address(3)).critic_grad(nets.address(4)).critic_target(nets.address(5))
            .log_alpha(nets.address(6)).log_alpha_grad(nets.address(7));
        args.obs(b.tensors.address(0)).action(b.tensors.address(1)).reward(b.tensors.address(2))
            .next_obs(b.tensors.address(3)).not_done(b.tensors.address(4)).noise(b.tensors.address(5))
            .noise2(b.tensors.address(6));
        adam(criticAdam, criticOptimizer);
        if (actorSteps)
        {
            adam(actorAdam, actorOptimizer);
        }
        if (null != alphaOptimizer)
        {
            adam(alphaAdam, alphaOptimizer);
        }
        args.actor_turn(actorSteps);
        final GradientReducer criticReducer = criticOptimizer.gradientReducer();
        if (null == criticReducer)
        {
            NativeKernels.ac_update(handle, args, stats, STAGE_ALL);
            return;
        }
        NativeKernels.ac_update(handle, args, stats, STAGE_CRITIC_GRADS);
        criticReducer.reduce(criticOptimizer.parameters());
        NativeKernels.ac_update(handle, args, stats, STAGE_ACTOR_GRADS);
        if (actorSteps)
        {
            actorOptimizer.gradientReducer().reduce(actorOptimizer.parameters());
        }
        if (null != alphaOptimizer)
        {
            alphaOptimizer.gradientReducer().reduce(alphaOptimizer.parameters());
        }
        NativeKernels.ac_update(handle, args, stats, STAGE_STEPS);
    }

    /** Every optimizer with a reducer, or none: a half-reduced update would let the ranks' parameters drift apart. */
    private void checkReducers()
    {
        final boolean critic = null != criticOptimizer.gradientReducer();
        if (critic != (null != actorOptimizer.gradientReducer())
            || (null != alphaOptimizer && critic != (null != alphaOptimizer.gradientReducer())))
        {
            throw new IllegalStateException("FusedActorCritic: either every optimizer (critic, actor"
                + (null == alphaOptimizer ? "" : ", alpha") + ") has a gradient reducer or none has");
        }
    }

    private static void adam(final NativeKernels.AdamArgs field, final FusedAdam optimizer)
    {
        field.set(optimizer.config(), optimizer.countNativeStep("FusedActorCritic"));
    }

    /**
     * Runs each update's twin-critic halves (both target critics' forwards, both critics' forward and backward, SAC's
     * actor loss through both) on two threads: the caller's and a native helper thread this update owns, which spins
     * for 0.5 ms after a half for the next (updates come that often while training) and then sleeps, and ends with
     * {@link #close()}. The results are the same bits as on one thread. Both threads call OpenBLAS at once, so keep
     * OpenBLAS itself at one thread.
     *
     * @param threads 1 (the default) or 2
     * @throws IllegalArgumentException for another count
     * @throws IllegalStateException if closed
     */
    public void threads(final int threads)
    {
        Threads.checkUpdateThreads("FusedActorCritic: threads", threads);
        if (0 == handle)
        {
            throw new IllegalStateException("FusedActorCritic is closed");
        }
        NativeKernels.ac_threads(handle, threads);
    }

    /** @return the last update's twin critic loss (sum of the two MSEs) */
    public double criticLoss()
    {
        return stats.critic_loss();
    }

    /** @return the last update's mean Q1 on the batch */
    public double qMean()
    {
        return stats.q();
    }

    /** @return the last update's mean target value (min target Q, less SAC's entropy term) */
    public double targetQMean()
    {
        return stats.target_q();
    }

    /** @return the last actor (policy) loss computed */
    public double actorLoss()
    {
        return stats.actor_loss();
    }

    /** @return SAC's last temperature loss (0 when alpha is fixed) */
    public double alphaLoss()
    {
        return stats.alpha_loss();
    }

    /** @return the temperature SAC's last update used */
    public double alpha()
    {
        return stats.alpha();
    }

    /** @return SAC's last mean log-probability of the sampled actions */
    public double logProbMean()
    {
        return stats.log_prob();
    }

    /** Frees the native workspace and the argument buffers. */
    @Override
    public void close()
    {
        if (0 != handle)
        {
            NativeKernels.ac_free(handle);
            handle = 0;
        }
        natives.close();
    }
}
