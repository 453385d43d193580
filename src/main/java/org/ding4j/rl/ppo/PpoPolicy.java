package org.ding4j.rl.ppo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.ResumableRandom;
import org.ding4j.internal.RunOwnership;
import org.ding4j.policy.DivergedException;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.rl.pipeline.Actor;
import org.ding4j.torch.Activation;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.FusedPpo;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.NativeFloats;
import org.ding4j.torch.NativeOwner;
import org.ding4j.torch.PackedMlp;
import org.ding4j.torch.StateDictReport;
import org.ding4j.torch.Threads;

/**
 * PPO (clipped surrogate objective) through the learner's list path: one training call on a rollout runs
 * {@code epoch_per_collect} epochs of shuffled minibatches, and each minibatch is its own iteration (its own
 * {@code before_iter} / {@code after_iter} hooks and log values, {@link LogSink#nextUpdate()} between them), as
 * DI-engine's learner counts them. An actor MLP and a critic MLP (Tanh between layers), one Adam over both with a
 * global gradient-norm clip; a categorical head for a {@code Discrete} action space, or for a {@code Box} a Gaussian
 * with a state-independent log standard deviation whose samples are clipped to [-1, 1] where the env is stepped (the
 * log-probability is the unclipped sample's, as CleanRL's). The loss: the clipped surrogate on advantages normalised
 * per minibatch, plus {@code value_weight} times the (optionally clipped) value loss, minus {@code entropy_weight}
 * times the entropy. {@link FusedPpo} runs a whole training call natively ({@link Settings#fused()}; its
 * minibatches' hooks then run after it, as DI-engine's list path runs them), or libtorch autograd runs each minibatch
 * (the reference). Actions at collection and evaluation come from {@link PackedMlp}'s forward of the same weights.
 * Not thread-safe: the learner's thread.
 */
public final class PpoPolicy implements Policy<PpoBatch>, AutoCloseable
{
    /** What a refused state is called. */
    private static final String STATE = "PPO state";
    private static final double LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

    /**
     * PPO's settings, as DI-engine's config names them.
     *
     * @param obs           observation width ({@code model.obs_shape})
     * @param actions       a {@code Discrete} space's action count, or a {@code Box}'s width ({@code action_shape})
     * @param discrete      categorical (true) or Gaussian head
     * @param hidden        the hidden widths of actor and critic
     * @param minibatch     transitions per minibatch ({@code learn.batch_size})
     * @param epochs        passes over a rollout ({@code learn.epoch_per_collect})
     * @param learningRate  Adam's learning rate
     * @param clipRatio     the surrogate's clip, epsilon
     * @param valueClip     whether the value loss is clipped around the rollout's values as well
     * @param valueWeight   the value loss's weight
     * @param entropyWeight the entropy bonus's weight
     * @param advantageNorm whether advantages are normalised per minibatch
     * @param gradClip      the global gradient-norm clip (0: none)
     * @param fused         whether {@link FusedPpo} runs the update (else libtorch autograd)
     */
    public record Settings(int obs, int actions, boolean discrete, long[] hidden, int minibatch, int epochs,
        double learningRate, double clipRatio, boolean valueClip, double valueWeight, double entropyWeight,
        boolean advantageNorm, double gradClip, boolean fused)
    {
        /** Copies the widths. */
        public Settings
        {
            hidden = Objects.requireNonNull(hidden, "hidden").clone();
        }

        /** @return floats per stored action: 1 (the index) for a categorical head */
        int actionWidth()
        {
            return discrete ? 1 : actions;
        }
    }

    private final Settings settings;
    private final NativeOwner natives = new NativeOwner("PpoPolicy");
    /** Set while a pipeline's run owns this policy: then only the run closes it. */
    final RunOwnership ownership = new RunOwnership();
    private final Mlp actor;
    private final Mlp critic;
    /** The Gaussian head's log standard deviations (null for a categorical head). */
    private final Tensor logStd;
    /** The module holding {@link #logStd} (null for a categorical head). */
    private final Module head;
    private final FlatParameters params;
    private final FusedAdam optimizer;
    private final PackedMlp actorPlan;
    private final PackedMlp criticPlan;
    /** The fused native update, or null: libtorch autograd runs it. */
    private final FusedPpo fused;
    /** The batch {@link #fused} has bound, and its binding. */
    private PpoBatch boundBatch;
    private FusedPpo.Data bound;
    /** Shuffles each epoch's minibatches; saved in the state dict. */
    private final ResumableRandom shuffle;
    private final Scalar lowClip;
    private final Scalar highClip;
    /** Updates so far: the acting copies repack when it moves. */
    private long updates;
    private int[] permutation = new int[0];
    /** The fused path's minibatch order: every epoch's permutation. */
    private int[] order;
    private Tensor index;
    private LongPointer indexData;
    private int policyLoss;
    private int valueLoss;
    private int entropy;
    private int approxKl;
    private int clipFraction;
    private int gradNorm;
    private int totalLoss;
    private int curLr;

    /**
     * Builds the nets from libtorch's global generator (seed it first).
     *
     * @param settings    the settings
     * @param shuffleSeed the minibatch shuffle's seed
     */
    public PpoPolicy(final Settings settings, final long shuffleSeed)
    {
        this.settings = Objects.requireNonNull(settings, "settings");
        final long[] actorSizes = sizes(settings.obs(), settings.hidden(), settings.actions());
        final long[] criticSizes = sizes(settings.obs(), settings.hidden(), 1);
        actor = Mlp.of(Activation.TANH, actorSizes);
        critic = Mlp.of(Activation.TANH, criticSizes);
        final List<String> prefixes = new ArrayList<>(List.of("actor.", "critic."));
        final List<Module> modules = new ArrayList<>(List.of(actor.module(), critic.module()));
        if (settings.discrete())
        {
            logStd = null;
            head = null;
        }
        else
        {
            head = natives.own(new Module());
            logStd = head.register_parameter("log_std", torch.zeros(settings.actions()), true);
            prefixes.add("");
            modules.add(head);
        }
        params = FlatParameters.ofModules(prefixes, modules);
        optimizer = new FusedAdam(params, AdamConfig.adam(settings.learningRate()), settings.gradClip());
        actorPlan = PackedMlp.sequential(params, "actor.", actorSizes, Activation.TANH);
        criticPlan = PackedMlp.sequential(params, "critic.", criticSizes, Activation.TANH);
        shuffle = new ResumableRandom(shuffleSeed);
        try
        {
            fused = settings.fused() ? new FusedPpo(new FusedPpo.Layout(settings.discrete(), settings.minibatch(),
                settings.obs(), settings.actions(), actorSizes, criticSizes), new FusedPpo.Loss(settings.clipRatio(),
                settings.valueClip(), settings.valueWeight(), settings.entropyWeight(), settings.advantageNorm()),
                params, optimizer) : null;
        }
        catch (final RuntimeException | Error ex)
        {
            closeNets();
            throw ex;
        }
        lowClip = natives.own(new Scalar(1.0 - settings.clipRatio()));
        highClip = natives.own(new Scalar(1.0 + settings.clipRatio()));
    }

    private static long[] sizes(final int in, final long[] hidden, final int out)
    {
        final long[] sizes = new long[hidden.length + 2];
        sizes[0] = in;
        System.arraycopy(hidden, 0, sizes, 1, hidden.length);
        sizes[sizes.length - 1] = out;
        return sizes;
    }

    /** @return the settings */
    public Settings settings()
    {
        return settings;
    }

    /** @return the optimizer over actor, critic (and log standard deviations) */
    public FusedAdam optimizer()
    {
        return optimizer;
    }

    /** @return the flat parameters ({@code actor.*}, {@code critic.*}, {@code log_std}) */
    public FlatParameters parameters()
    {
        return params;
    }

    /**
     * How many threads the fused update runs on: 2 puts the critic's half of each minibatch on a second core (a native
     * helper thread, see {@link FusedPpo#threads}); the results are the same bits
     * ({@code policy.learn.update_threads}).
     * The autograd path ignores it.
     *
     * @param threads 1 or 2
     */
    public void updateThreads(final int threads)
    {
        Threads.checkUpdateThreads("update_threads", threads);
        if (null != fused)
        {
            fused.threads(threads);
        }
    }

    /** @return the actor's plan for {@link PackedMlp}'s forward (its layers' offsets in {@link #parameters()}) */
    public PackedMlp actorPlan()
    {
        return actorPlan;
    }

    /** @return the modules the optimizer trains, for c10d's Reducer on data-parallel ranks */
    List<Module> modules()
    {
        return null == head ? List.of(actor.module(), critic.module()) : List.of(actor.module(), critic.module(),
            head);
    }

    @Override
    public void registerLogVars(final LogSink sink)
    {
        policyLoss = sink.register("policy_loss");
        valueLoss = sink.register("value_loss");
        entropy = sink.register("entropy");
        approxKl = sink.register("approx_kl");
        clipFraction = sink.register("clip_fraction");
        gradNorm = sink.register("grad_norm");
        totalLoss = sink.register("total_loss");
        curLr = sink.register("cur_lr");
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr", "total_loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
            "grad_norm");
    }

    @Override
    public int batchSize()
    {
        return settings.minibatch();
    }

    /**
     * {@code epochs x rows / minibatch} updates on the rollout, each its own iteration.
     *
     * @param batch the rollout with its advantages and returns
     * @param sink  where each update's log values go
     */
    @Override
    public void forward(final PpoBatch batch, final LogSink sink)
    {
        final int rows = batch.rows();
        final int mb = settings.minibatch();
        if (0 != rows % mb)
        {
            throw new IllegalArgumentException("batch: expected a multiple of the minibatch " + mb + " rows, got "
                + rows);
        }
        if (null != fused)
        {
            fusedForward(batch, sink);
            return;
        }
        if (permutation.length != rows)
        {
            permutation = new int[rows];
            index = natives.own(torch.zeros(new long[] {mb}, new org.bytedeco.pytorch.TensorOptions(
                torch.ScalarType.Long)));
            indexData = new LongPointer(index.data_ptr());
        }
        boolean first = true;
        for (int epoch = 0; epoch < settings.epochs(); epoch++)
        {
            shuffle();
            for (int start = 0; start < rows; start += mb)
            {
                if (!first)
                {
                    sink.nextUpdate();
                }
                first = false;
                for (int k = 0; k < mb; k++)
                {
                    indexData.put(k, permutation[start + k]);
                }
                update(batch, sink);
            }
        }
    }

    /**
     * Every epoch's shuffle laid end to end, and one native call for all their minibatches; then each minibatch's
     * values, an iteration each. The hooks of a minibatch's iteration run after the call, so they see the rollout's
     * final weights, as DI-engine's list path runs them after the policy's whole forward.
     */
    private void fusedForward(final PpoBatch batch, final LogSink sink)
    {
        final int rows = batch.rows();
        if (permutation.length != rows)
        {
            permutation = new int[rows];
            order = new int[rows * settings.epochs()];
        }
        for (int epoch = 0; epoch < settings.epochs(); epoch++)
        {
            shuffle();
            System.arraycopy(permutation, 0, order, epoch * rows, rows);
        }
        fused.update(bind(batch), order);
        updates++;
        final int minibatches = order.length / settings.minibatch();
        sink.shareTime(minibatches);
        for (int j = 0; j < minibatches; j++)
        {
            if (j > 0)
            {
                sink.nextUpdate();
            }
            sink.put(policyLoss, fused.stat(j, FusedPpo.Stat.POLICY_LOSS));
            sink.put(valueLoss, fused.stat(j, FusedPpo.Stat.VALUE_LOSS));
            sink.put(entropy, fused.stat(j, FusedPpo.Stat.ENTROPY));
            sink.put(approxKl, fused.stat(j, FusedPpo.Stat.APPROX_KL));
            sink.put(clipFraction, fused.stat(j, FusedPpo.Stat.CLIP_FRACTION));
            sink.put(gradNorm, fused.stat(j, FusedPpo.Stat.GRAD_NORM));
            sink.put(totalLoss, fused.stat(j, FusedPpo.Stat.TOTAL_LOSS));
            sink.put(curLr, optimizer.lr());
        }
        DivergedException.requireFinite("PPO", "total_loss", fused.stat(minibatches - 1, FusedPpo.Stat.TOTAL_LOSS));
    }

    /** {@link #fused}'s binding of the batch's tensors, made when a new batch comes. */
    private FusedPpo.Data bind(final PpoBatch batch)
    {
        if (batch != boundBatch)
        {
            bound = fused.bind(batch.obs(), batch.actions(), batch.logProbs(), batch.values(), batch.advantages(),
                batch.returns());
            boundBatch = batch;
        }
        return bound;
    }

    /** A Fisher-Yates shuffle of 0..rows-1 from the saved stream. */
    private void shuffle()
    {
        for (int i = 0; i < permutation.length; i++)
        {
            permutation[i] = i;
        }
        for (int i = permutation.length - 1; i > 0; i--)
        {
            final int j = shuffle.nextInt(i + 1);
            final int t = permutation[i];
            permutation[i] = permutation[j];
            permutation[j] = t;
        }
    }

    /** One minibatch's loss and its parts, libtorch tensors inside the caller's scope. */
    private record Losses(Tensor total, Tensor policy, Tensor value, Tensor entropy, Tensor ratio, Tensor logRatio)
    {
    }

    /** The libtorch autograd loss of the rows in {@code index}. */
    private Losses losses(final PpoBatch batch, final Tensor index)
    {
        final Tensor obs = batch.obs().index_select(0, index);
        final Tensor action = batch.actions().index_select(0, index);
        final Tensor oldLogp = batch.logProbs().index_select(0, index);
        final Tensor oldValue = batch.values().index_select(0, index);
        final Tensor ret = batch.returns().index_select(0, index);
        Tensor adv = batch.advantages().index_select(0, index);
        if (settings.advantageNorm())
        {
            adv = adv.sub(adv.mean()).div(adv.std().add(new Scalar(1e-8)));
        }
        final Tensor out = actor.forward(obs);
        final Tensor logp;
        final Tensor ent;
        if (settings.discrete())
        {
            final Tensor all = out.log_softmax(1);
            logp = all.gather(1, action.toType(torch.ScalarType.Long)).squeeze(1);
            ent = all.exp().mul(all).sum(1).neg().mean();
        }
        else
        {
            final Tensor z = action.sub(out).div(logStd.exp());
            logp = z.square().mul(new Scalar(-0.5)).sub(logStd).sub(new Scalar(LOG_SQRT_2PI)).sum(1);
            ent = logStd.add(new Scalar(0.5 + LOG_SQRT_2PI)).sum();
        }
        final Tensor logRatio = logp.sub(oldLogp);
        final Tensor ratio = logRatio.exp();
        final Tensor clipped = ratio.clamp(new ScalarOptional(lowClip), new ScalarOptional(highClip));
        final Tensor pg = torch.maximum(adv.neg().mul(ratio), adv.neg().mul(clipped)).mean();
        final Tensor value = critic.forward(obs).squeeze(1);
        Tensor vl = value.sub(ret).square();
        if (settings.valueClip())
        {
            final Tensor near = oldValue.add(value.sub(oldValue).clamp(
                new ScalarOptional(new Scalar(-settings.clipRatio())),
                new ScalarOptional(new Scalar(settings.clipRatio()))));
            vl = torch.maximum(vl, near.sub(ret).square());
        }
        vl = vl.mean().mul(new Scalar(0.5));
        final Tensor loss = pg.add(vl.mul(new Scalar(settings.valueWeight())))
            .sub(ent.mul(new Scalar(settings.entropyWeight())));
        return new Losses(loss, pg, vl, ent, ratio, logRatio);
    }

    private void update(final PpoBatch batch, final LogSink sink)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Losses l = losses(batch, index);
            params.zeroGrad();
            optimizer.backward(l.total());
            final double norm = optimizer.step();
            updates++;
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                sink.put(approxKl, l.ratio().sub(new Scalar(1.0)).sub(l.logRatio()).mean().item_double());
                sink.put(clipFraction, l.ratio().sub(new Scalar(1.0)).abs().gt(new Scalar(settings.clipRatio()))
                    .toType(torch.ScalarType.Float).mean().item_double());
            }
            sink.put(policyLoss, l.policy().item_double());
            sink.put(valueLoss, l.value().item_double());
            sink.put(entropy, l.entropy().item_double());
            sink.put(gradNorm, Double.isNaN(norm) ? params.gradNorm() : norm);
            final double total = l.total().item_double();
            sink.put(totalLoss, total);
            sink.put(curLr, optimizer.lr());
            DivergedException.requireFinite("PPO", "total_loss", total);
        }
    }

    /**
     * One minibatch's gradients into {@link #parameters()}' gradient buffer, with no step: the fused kernel's or
     * libtorch autograd's, whichever this policy runs (for the checks of one against the other).
     *
     * @param batch the rollout
     * @param rows  the minibatch's rows
     * @return its policy loss, value loss, entropy and total loss
     */
    double[] gradients(final PpoBatch batch, final int[] rows)
    {
        if (null != fused)
        {
            fused.gradients(bind(batch), rows);
            return new double[] {fused.stat(0, FusedPpo.Stat.POLICY_LOSS), fused.stat(0, FusedPpo.Stat.VALUE_LOSS),
                fused.stat(0, FusedPpo.Stat.ENTROPY), fused.stat(0, FusedPpo.Stat.TOTAL_LOSS)};
        }
        try (PointerScope scope = new PointerScope())
        {
            final Tensor chosen = torch.zeros(new long[] {rows.length}, new org.bytedeco.pytorch.TensorOptions(
                torch.ScalarType.Long));
            final LongPointer data = new LongPointer(chosen.data_ptr());
            for (int k = 0; k < rows.length; k++)
            {
                data.put(k, rows[k]);
            }
            final Losses l = losses(batch, chosen);
            params.zeroGrad();
            l.total().backward();
            return new double[] {l.policy().item_double(), l.value().item_double(), l.entropy().item_double(),
                l.total().item_double()};
        }
    }

    /** @return an acting copy of this policy for one thread (collector, evaluator) */
    Acting acting()
    {
        return new Acting();
    }

    /**
     * The policy's actions and values from {@link PackedMlp}'s forward of its current weights (repacked whenever an
     * update moved them): sampled with their log-probabilities at collection, the mode at evaluation. One per
     * thread.
     */
    final class Acting implements Actor
    {
        private final NativeFloats actorPacked = new NativeFloats(actorPlan.packedFloats());
        private final NativeFloats criticPacked = new NativeFloats(criticPlan.packedFloats());
        private final PackedMlp.Scratch actorScratch = actorPlan.newScratch(1);
        private final PackedMlp.Scratch criticScratch = criticPlan.newScratch(1);
        private float[] out = new float[settings.actions()];
        private long packedAt = -1;
        /** The log standard deviations in the flat buffer (null for a categorical head). */
        private final FloatPointer logStdData = null == logStd ? null
            : new FloatPointer(params.view(params.names().indexOf("log_std")).data_ptr());

        private void pack()
        {
            if (packedAt != updates)
            {
                actorPlan.pack(params, actorPacked);
                criticPlan.pack(params, criticPacked);
                packedAt = updates;
            }
        }

        /**
         * Samples an action per row.
         *
         * @param obs     {@code [rows, obs]}
         * @param rows    rows
         * @param actions receives {@code [rows, actionWidth]}: the index, or the unclipped Gaussian sample
         * @param logp    receives each action's log-probability
         * @param values  receives each row's value
         * @param random  the exploration stream
         */
        void sample(final float[] obs, final int rows, final float[] actions, final float[] logp,
            final float[] values, final ResumableRandom random)
        {
            forward(obs, rows);
            final int n = settings.actions();
            for (int r = 0; r < rows; r++)
            {
                if (settings.discrete())
                {
                    double max = Double.NEGATIVE_INFINITY;
                    for (int k = 0; k < n; k++)
                    {
                        max = Math.max(max, out[r * n + k]);
                    }
                    double sum = 0;
                    for (int k = 0; k < n; k++)
                    {
                        sum += Math.exp(out[r * n + k] - max);
                    }
                    double u = random.nextDouble() * sum;
                    int pick = n - 1;
                    for (int k = 0; k < n; k++)
                    {
                        u -= Math.exp(out[r * n + k] - max);
                        if (u < 0)
                        {
                            pick = k;
                            break;
                        }
                    }
                    actions[r] = pick;
                    logp[r] = (float)(out[r * n + pick] - max - Math.log(sum));
                }
                else
                {
                    double lp = 0;
                    for (int k = 0; k < n; k++)
                    {
                        final double ls = logStdAt(k);
                        final double z = random.nextGaussian();
                        actions[r * n + k] = (float)(out[r * n + k] + Math.exp(ls) * z);
                        lp += -0.5 * z * z - ls - LOG_SQRT_2PI;
                    }
                    logp[r] = (float)lp;
                }
            }
            criticPlan.forward(criticPacked, obs, rows, values, criticScratch);
        }

        /**
         * @param obs    {@code [rows, obs]}
         * @param rows   rows
         * @param values receives each row's value
         */
        void values(final float[] obs, final int rows, final float[] values)
        {
            pack();
            criticPlan.forward(criticPacked, obs, rows, values, criticScratch);
        }

        /** The mode: the most likely index, or the Gaussian's mean clipped to [-1, 1]. */
        @Override
        public void act(final float[] obs, final int rows, final float[] actions, final ResumableRandom explore)
        {
            forward(obs, rows);
            final int n = settings.actions();
            for (int r = 0; r < rows; r++)
            {
                if (settings.discrete())
                {
                    int best = 0;
                    for (int k = 1; k < n; k++)
                    {
                        if (out[r * n + k] > out[r * n + best])
                        {
                            best = k;
                        }
                    }
                    actions[r] = best;
                }
                else
                {
                    for (int k = 0; k < n; k++)
                    {
                        actions[r * n + k] = Math.max(-1f, Math.min(1f, out[r * n + k]));
                    }
                }
            }
        }

        private void forward(final float[] obs, final int rows)
        {
            pack();
            if (out.length < rows * settings.actions())
            {
                out = new float[rows * settings.actions()];
            }
            actorPlan.forward(actorPacked, obs, rows, out, actorScratch);
        }

        private double logStdAt(final int k)
        {
            return logStdData.get(k);
        }

        @Override
        public int obsWidth()
        {
            return settings.obs();
        }

        @Override
        public int actionWidth()
        {
            return settings.actionWidth();
        }
    }

    /** DI-engine's layout: {@code model} (actor, critic, log_std), {@code optimizer}, and the shuffle stream. */
    @Override
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("model", params.stateDict());
        state.put("optimizer", optimizer.stateDict());
        state.put("shuffle", shuffle.state());
        return state;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void loadStateDict(final Map<String, Object> state)
    {
        // Another algorithm's checkpoint is refused for its model first, as DQN's, TD3's and SAC's are.
        StateDictReport.requireSameModel("PPO", params.shapesByName(""), StateFields.section(STATE, state, "model"));
        StateFields.section(STATE, state, "optimizer");
        // The minibatch shuffle's stream.
        final long saved = StateFields.integer(STATE, state, "shuffle");
        loadModel(state);
        optimizer.loadStateDict((Map<String, Object>)state.get("optimizer"));
        shuffle.state(saved);
    }

    /**
     * Loads the nets alone from a checkpoint's {@code model} section: what acting needs ({@code ding4j eval}, a
     * service), so a file without the optimizer or the shuffle stream (saved from Python, say) serves too. Training
     * on from it needs {@link #loadStateDict}.
     *
     * @param state a checkpoint
     * @throws IllegalArgumentException if it has no {@code model} dict or its tensors do not fit the nets
     */
    public void loadModel(final Map<String, Object> state)
    {
        params.loadStateDict(StateFields.section(STATE, state, "model"), true);
        // The acting copies repack from the new weights.
        updates++;
    }

    /**
     * Frees the fused update, the optimizer, the flat buffers, the nets and their tensors.
     * Once closed, a later close does nothing.
     *
     * @throws IllegalStateException while a pipeline's run owns this policy (the run closes it when it ends)
     */
    @Override
    public void close()
    {
        if (!ownership.startClose("PpoPolicy"))
        {
            return;
        }
        if (null != fused)
        {
            fused.close();
        }
        closeNets();
    }

    private void closeNets()
    {
        optimizer.close();
        params.close();
        actor.close();
        critic.close();
        natives.close();
    }
}
