package org.ding4j.rl.dqn;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.LongOptional;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.StateFields;
import org.ding4j.internal.RunOwnership;
import org.ding4j.policy.DivergedException;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.torch.Activation;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.FusedDqnUpdate;
import org.ding4j.torch.NativeOwner;
import org.ding4j.torch.StateDictReport;

/**
 * DI-engine's DQN in learn mode on libtorch. One update on a {@link DqnBatch}:
 * <pre>
 *   q        = Q(obs)[action]
 *   a*       = argmax_a Q(next_obs)                 (double DQN: the online net picks the action)
 *   target   = nstep_return + bootstrap * Q_target(next_obs)[a*]    (bootstrap = gamma^n, 0 after a terminal)
 *   loss     = mean(weight * criterion(q, target))  (criterion: squared error, or Huber with delta 1)
 * </pre>
 * then backward into the flat gradient buffer and one fused Adam step (gradient-norm clipping folded in when
 * {@code grad_clip > 0}). The target net is a copy of the online net, refreshed by assignment every
 * {@code target_update_freq} updates, or, when {@code target_theta > 0}, moved by {@code theta} toward the online
 * net after every update ({@code target = (1 - theta) target + theta online}); either is one native call over the
 * flat buffer. Log vars {@code cur_lr, total_loss, q_value, target_q_value} (means over the batch, as DI-engine) and
 * {@code priority} (|q - target| per sample) go through the learner's {@link LogSink}. The batch's tensors are
 * preallocated and filled in place (no tensor is built from Java data per update); each update's temporaries live
 * in one {@link PointerScope}.
 * <p>
 * {@link #stateDict()} is DI-engine's ({@code model}, {@code target_model}, {@code optimizer}, in PyTorch's
 * layout) plus {@code updates}, the count the target-sync schedule runs on. Not thread-safe: the learner's training
 * thread only ({@link #online()} may be read by a collector on the same thread, or copied under the caller's own
 * synchronisation). Every native object it keeps has one owner
 * (the nets, the flat buffers, the optimizer, {@link NativeOwner} for the rest), so a caller's
 * {@link PointerScope} open while it is built frees none of them.
 */
public final class DqnPolicy implements Policy<DqnBatch>, AutoCloseable
{
    /**
     * The DQN hyper-parameters.
     *
     * @param obs              observation width
     * @param actions          number of actions
     * @param hidden           encoder widths
     * @param dueling          dueling head
     * @param batchSize        samples per update
     * @param lr               Adam learning rate
     * @param targetUpdateFreq updates between target assignments (used when {@code targetTheta == 0})
     * @param targetTheta      momentum of the soft target update, 0 for assignment
     * @param huber            Huber loss instead of squared error
     * @param gradClip         maximum gradient norm, 0 for none
     * @param activation       the activation after each hidden Linear layer
     */
    public record Settings(int obs, int actions, long[] hidden, boolean dueling, int batchSize, double lr,
        int targetUpdateFreq, double targetTheta, boolean huber, double gradClip, Activation activation)
    {
        /**
         * The settings with ReLU, DI-engine's default activation.
         *
         * @param obs              observation width
         * @param actions          number of actions
         * @param hidden           encoder widths
         * @param dueling          dueling head
         * @param batchSize        samples per update
         * @param lr               Adam learning rate
         * @param targetUpdateFreq updates between target assignments (used when {@code targetTheta == 0})
         * @param targetTheta      momentum of the soft target update, 0 for assignment
         * @param huber            Huber loss instead of squared error
         * @param gradClip         maximum gradient norm, 0 for none
         */
        public Settings(final int obs, final int actions, final long[] hidden, final boolean dueling,
            final int batchSize, final double lr, final int targetUpdateFreq, final double targetTheta,
            final boolean huber, final double gradClip)
        {
            this(obs, actions, hidden, dueling, batchSize, lr, targetUpdateFreq, targetTheta, huber, gradClip,
                Activation.RELU);
        }

        /**
         * @param obs     observation width
         * @param actions number of actions
         * @return a builder with DI-engine's CartPole DQN values for everything else
         */
        public static Builder builder(final int obs, final int actions)
        {
            return new Builder(obs, actions);
        }

        /** Checks the values; a wrong one is named with the rule it breaks. */
        public Settings
        {
            Objects.requireNonNull(hidden, "hidden");
            Objects.requireNonNull(activation, "activation");
            hidden = hidden.clone();
            if (batchSize < 1 || targetUpdateFreq < 1 || !(lr > 0) || !(targetTheta >= 0 && targetTheta <= 1)
                || !(gradClip >= 0))
            {
                throw new IllegalArgumentException("DqnPolicy: expected batch_size >= 1, learning_rate > 0, "
                    + "target_update_freq >= 1, 0 <= target_theta <= 1, grad_clip >= 0; got batch_size=" + batchSize
                    + " learning_rate=" + lr + " target_update_freq=" + targetUpdateFreq + " target_theta="
                    + targetTheta + " grad_clip=" + gradClip);
            }
        }
    }

    /**
     * Named settings for {@link Settings}, each with DI-engine's {@code cartpole_dqn_config} value as its default:
     * hidden widths [128, 128, 64], dueling head, batch 64, learning rate 1e-3, a hard target sync every 100 updates
     * ({@code targetTheta} 0), squared error, no gradient clip, ReLU. {@link #build()} checks them all.
     */
    public static final class Builder
    {
        private final int obs;
        private final int actions;
        private long[] hidden = {128, 128, 64};
        private boolean dueling = true;
        private int batchSize = 64;
        private double lr = 1e-3;
        private int targetUpdateFreq = 100;
        private double targetTheta;
        private boolean huber;
        private double gradClip;
        private Activation activation = Activation.RELU;

        private Builder(final int obs, final int actions)
        {
            this.obs = obs;
            this.actions = actions;
        }

        /**
         * @param widths the encoder's hidden widths
         * @return this
         */
        public Builder hidden(final long... widths)
        {
            this.hidden = widths.clone();
            return this;
        }

        /**
         * @param enable whether the head is dueling (V + A - mean A)
         * @return this
         */
        public Builder dueling(final boolean enable)
        {
            this.dueling = enable;
            return this;
        }

        /**
         * @param samples samples per update
         * @return this
         */
        public Builder batchSize(final int samples)
        {
            this.batchSize = samples;
            return this;
        }

        /**
         * @param rate Adam's learning rate
         * @return this
         */
        public Builder learningRate(final double rate)
        {
            this.lr = rate;
            return this;
        }

        /**
         * @param updates updates between hard target syncs (with {@code targetTheta} 0)
         * @return this
         */
        public Builder targetUpdateFreq(final int updates)
        {
            this.targetUpdateFreq = updates;
            return this;
        }

        /**
         * @param momentum the soft target update's weight of the online net (0: hard syncs)
         * @return this
         */
        public Builder targetTheta(final double momentum)
        {
            this.targetTheta = momentum;
            return this;
        }

        /**
         * @param enable Huber loss instead of squared error
         * @return this
         */
        public Builder huber(final boolean enable)
        {
            this.huber = enable;
            return this;
        }

        /**
         * @param maxNorm the gradient norm clip (0: none)
         * @return this
         */
        public Builder gradClip(final double maxNorm)
        {
            this.gradClip = maxNorm;
            return this;
        }

        /**
         * @param function the activation after each hidden layer
         * @return this
         */
        public Builder activation(final Activation function)
        {
            this.activation = function;
            return this;
        }

        /**
         * @return the settings
         * @throws IllegalArgumentException naming the setting that breaks its rule
         */
        public Settings build()
        {
            return new Settings(obs, actions, hidden, dueling, batchSize, lr, targetUpdateFreq, targetTheta, huber,
                gradClip, activation);
        }
    }

    private static final long REDUCTION_NONE = 0;
    /** Never closed: owns the class's constants, so that a scope open when the class loads cannot free them. */
    private static final NativeOwner CONSTANTS = new NativeOwner("DqnPolicy constants");
    private static final LongOptional ACTION_DIM = CONSTANTS.own(new LongOptional(1));

    private final Settings settings;
    private final NativeOwner natives = new NativeOwner("DqnPolicy");
    /** Set while a pipeline's run owns this policy: then only the run closes it. */
    final RunOwnership ownership = new RunOwnership();
    private final QNetwork online;
    private final QNetwork target;
    private final FlatParameters params;
    private final FlatParameters targetParams;
    private final FusedAdam optimizer;
    private final Scalar theta;
    private final float[] tdStage;
    /** |TD error| lands here (a preallocated tensor) and is read back through one pointer made once. */
    private final Tensor tdBuffer;
    private final FloatPointer tdBufferData;
    private final double[] priorities;
    private long updates;
    private boolean freshOptimizer;
    /** The native fused update when enabled (MLP Q-network on the CPU), else null: libtorch autograd runs it. */
    private FusedDqnUpdate fused;
    /**
     * The last batch object's binding: a pipeline refills one batch, so one slot binds once; another batch object
     * replaces it, and the dropped batch's binding (its tensors) goes with it.
     */
    private DqnBatch boundBatch;
    private FusedDqnUpdate.Batch binding;
    private double lastLoss;
    private double lastQ;
    private double lastTargetQ;
    private int curLr;
    private int totalLoss;
    private int qValue;
    private int targetQValue;

    /**
     * Builds the online net from the global generator (seed it first), the target net as its copy, the fused Adam,
     * and the fused native update ({@link #fusedUpdate(boolean) fusedUpdate(false)} runs libtorch autograd instead).
     *
     * @param settings the hyper-parameters ({@link Settings#builder} names them)
     */
    public DqnPolicy(final Settings settings)
    {
        this.settings = Objects.requireNonNull(settings, "settings");
        online = new QNetwork(settings.obs(), settings.actions(), settings.hidden(), settings.dueling(),
            settings.activation());
        target = new QNetwork(settings.obs(), settings.actions(), settings.hidden(), settings.dueling(),
            settings.activation());
        params = FlatParameters.of(online.module());
        targetParams = FlatParameters.of(target.module());
        syncTarget();
        optimizer = new FusedAdam(params, AdamConfig.adam(settings.lr()), settings.gradClip());
        theta = natives.own(new Scalar(settings.targetTheta()));
        tdStage = new float[settings.batchSize()];
        tdBuffer = natives.own(torch.zeros(settings.batchSize()));
        tdBufferData = new FloatPointer(tdBuffer.data_ptr());
        priorities = new double[settings.batchSize()];
        fusedUpdate(true);
    }

    @Override
    public void registerLogVars(final LogSink sink)
    {
        curLr = sink.register("cur_lr");
        totalLoss = sink.register("total_loss");
        qValue = sink.register("q_value");
        targetQValue = sink.register("target_q_value");
    }

    @Override
    public void forward(final DqnBatch batch, final LogSink sink)
    {
        if (null == batch || batch.size() != settings.batchSize() || batch.obsWidth() != settings.obs())
        {
            throw new IllegalArgumentException("DqnPolicy: expected a DqnBatch of " + settings.batchSize()
                + " samples of width " + settings.obs() + ", got " + (null == batch ? "null"
                : batch.size() + " samples of width " + batch.obsWidth()));
        }
        batch.upload();
        if (null != fused)
        {
            fusedStep(batch);
        }
        else
        {
            eagerStep(batch);
        }
        DivergedException.requireFinite("DQN", "total_loss", lastLoss);
        tdBufferData.get(tdStage);
        updateTarget();
        for (int i = 0; i < tdStage.length; i++)
        {
            priorities[i] = tdStage[i];
        }
        sink.put(curLr, optimizer.lr());
        sink.put(totalLoss, lastLoss);
        sink.put(qValue, lastQ);
        sink.put(targetQValue, lastTargetQ);
        sink.priority(priorities, batch.bufferIndex, batch.uniqueId, priorities.length);
    }

    /** One native call for forward and backward, then the fused optimizer step. */
    private void fusedStep(final DqnBatch batch)
    {
        if (batch != boundBatch)
        {
            // Once per batch object: its tensors are preallocated, so their addresses hold for its life.
            binding = fused.bind(batch.obsTensor(), batch.nextObsTensor(), batch.actionTensor(), batch.returnTensor(),
                batch.bootstrapTensor(), batch.weightTensor(), tdBuffer);
            boundBatch = batch;
        }
        fused.update(binding, settings.huber(), optimizer.gradientReducer());
        optimizer.step();
        lastLoss = fused.loss();
        lastQ = fused.qMean();
        lastTargetQ = fused.targetQMean();
    }

    /** libtorch autograd, operator by operator: the general path and the fused one's reference. */
    private void eagerStep(final DqnBatch batch)
    {
        try (PointerScope scope = new PointerScope())
        {
            params.zeroGrad();
            final Tensor q = online.forward(batch.obsTensor());
            final Tensor qTaken = q.gather(1, batch.actionTensor().unsqueeze(1)).squeeze(1);
            final Tensor targetQ;
            final Tensor tdTarget;
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                targetQ = target.forward(batch.nextObsTensor());
                final Tensor nextAction = online.forward(batch.nextObsTensor()).argmax(ACTION_DIM, true);
                tdTarget = batch.returnTensor().addcmul(batch.bootstrapTensor(),
                    targetQ.gather(1, nextAction).squeeze(1));
            }
            final Tensor td = qTaken.sub(tdTarget);
            final Tensor perSample = settings.huber() ? torch.huber_loss(qTaken, tdTarget, REDUCTION_NONE, 1.0)
                : td.mul(td);
            final Tensor lossTensor = perSample.mul(batch.weightTensor()).mean();
            optimizer.backward(lossTensor);
            optimizer.step();
            lastLoss = lossTensor.item_double();
            lastQ = q.detach().mean().item_double();
            lastTargetQ = targetQ.mean().item_double();
            torch.abs_out(tdBuffer, td.detach());
        }
    }

    private void updateTarget()
    {
        updates++;
        if (settings.targetTheta() > 0)
        {
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                targetParams.group(0).values().lerp_(params.group(0).values(), theta);
            }
        }
        else if (0 == updates % settings.targetUpdateFreq())
        {
            syncTarget();
        }
    }

    private void syncTarget()
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            targetParams.group(0).values().copy_(params.group(0).values());
        }
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr", "total_loss", "q_value", "target_q_value");
    }

    /**
     * Chooses how an update runs: one native call for the whole forward and backward ({@link FusedDqnUpdate}, the
     * default of the DQN pipeline, {@code policy.learn.fused_update}), or libtorch autograd operator by operator
     * (the general path and the reference). Both write the same gradients into the same flat buffer, so the
     * optimizer, gradient all-reduce, checkpoints and the state dict are the same either way.
     *
     * @param enable whether to use the fused native update
     * @throws IllegalArgumentException if the nets are not the MLP layout the fused update knows (named parameter)
     */
    public void fusedUpdate(final boolean enable)
    {
        if (null != fused)
        {
            fused.close();
            fused = null;
            boundBatch = null;
            binding = null;
        }
        if (enable)
        {
            fused = new FusedDqnUpdate(params, targetParams, settings.hidden(), settings.obs(), settings.actions(),
                settings.dueling(), settings.activation(), settings.batchSize(), layerOffsets());
        }
    }

    /** @return whether updates run through the fused native update */
    public boolean fusedUpdate()
    {
        return null != fused;
    }

    /** The flat-buffer offsets of weight and bias of each layer, in the order the fused update expects. */
    private long[] layerOffsets()
    {
        return layerOffsets(params, settings.hidden(), settings.dueling());
    }

    /**
     * @param net     a {@link QNetwork}'s flat parameters
     * @param hidden  its encoder widths
     * @param dueling whether its head is dueling
     * @return the offsets of weight and bias of each layer, in {@link FusedDqnUpdate}'s order
     * @throws IllegalArgumentException naming a parameter the layout needs and the net lacks
     */
    public static long[] layerOffsets(final FlatParameters net, final long[] hidden, final boolean dueling)
    {
        final List<String> names = net.names();
        final List<String> expected = new java.util.ArrayList<>();
        for (int l = 0; l < hidden.length; l++)
        {
            expected.add("encoder.main." + 2 * l + ".weight");
            expected.add("encoder.main." + 2 * l + ".bias");
        }
        final String head = dueling ? "head.A." : "head.Q.";
        expected.addAll(List.of(head + "0.0.weight", head + "0.0.bias", head + "1.weight", head + "1.bias"));
        if (dueling)
        {
            expected.addAll(List.of("head.V.0.0.weight", "head.V.0.0.bias", "head.V.1.weight", "head.V.1.bias"));
        }
        final long[] offsets = new long[expected.size()];
        for (int i = 0; i < offsets.length; i++)
        {
            final int index = names.indexOf(expected.get(i));
            if (index < 0)
            {
                throw new IllegalArgumentException("fused DQN update: the net has no parameter " + expected.get(i)
                    + " (not the MLP Q-network it knows: " + names + ")");
            }
            offsets[i] = net.offset(index);
        }
        return offsets;
    }

    /**
     * @param allow whether {@link #loadStateDict} may take a state without {@code optimizer} (Adam then starts
     *              afresh); refused by default, since a resume would silently lose the moments
     */
    public void allowFreshOptimizer(final boolean allow)
    {
        this.freshOptimizer = allow;
    }

    @Override
    public int batchSize()
    {
        return settings.batchSize();
    }

    @Override
    public String info()
    {
        return "DqnPolicy(hidden=" + java.util.Arrays.toString(settings.hidden()) + ", dueling=" + settings.dueling()
            + ", " + params.numel() + " parameters)";
    }

    @Override
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("model", params.stateDict());
        state.put("target_model", targetParams.stateDict());
        state.put("optimizer", optimizer.stateDict());
        // The target-sync schedule counts updates: a resume at update 137 must sync at 200, not 237.
        state.put("updates", updates);
        return state;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void loadStateDict(final Map<String, Object> state)
    {
        StateDictReport.requireSameModel("DQN", params.shapesByName(""), section(state, "model"));
        if (!state.containsKey("optimizer") && !freshOptimizer)
        {
            throw new IllegalArgumentException("DQN state dict: 'optimizer' is missing, so Adam would restart from "
                + "zero moments; set policy.learn.fresh_optimizer_on_resume: true to accept that");
        }
        final Object done = state.getOrDefault("updates", 0L);
        if (!(done instanceof Long count) || count < 0)
        {
            throw new IllegalArgumentException("DQN state dict: 'updates' must be an integer >= 0 (the target-sync "
                + "schedule's count), got " + done);
        }
        params.loadStateDict(section(state, "model"), true);
        targetParams.loadStateDict(section(state, "target_model"), true);
        if (state.containsKey("optimizer"))
        {
            optimizer.loadStateDict((Map<String, Object>)state.get("optimizer"));
        }
        // A state without the count (DI-engine's, or ding4j's before it was saved) resumes the schedule from 0.
        updates = (Long)done;
    }

    private static Map<?, ?> section(final Map<String, Object> state, final String key)
    {
        return StateFields.section("DQN state dict", state, key);
    }

    /** @return the online Q-network (the collector's and evaluator's net in serial mode) */
    public QNetwork online()
    {
        return online;
    }

    /** @return the online net's flat parameters */
    public FlatParameters parameters()
    {
        return params;
    }

    /** @return the fused Adam over {@link #parameters()} (a distributed run sets its gradient reducer) */
    public FusedAdam optimizer()
    {
        return optimizer;
    }

    /** @return the target net's flat parameters */
    public FlatParameters targetParameters()
    {
        return targetParams;
    }

    /** @return the hyper-parameters */
    public Settings settings()
    {
        return settings;
    }

    /** @return completed updates since construction */
    public long updates()
    {
        return updates;
    }

    /**
     * Frees the optimizer, the flat buffers, its own tensors and both nets.
     * Once closed, a later close does nothing.
     *
     * @throws IllegalStateException while a pipeline's run owns this policy (the run closes it when it ends)
     */
    @Override
    public void close()
    {
        if (!ownership.startClose("DqnPolicy"))
        {
            return;
        }
        if (null != fused)
        {
            fused.close();
        }
        optimizer.close();
        params.close();
        targetParams.close();
        natives.close();
        online.close();
        target.close();
    }
}
