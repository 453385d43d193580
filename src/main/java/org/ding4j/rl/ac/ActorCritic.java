package org.ding4j.rl.ac;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.ResumableRandom;
import org.ding4j.internal.RunOwnership;
import org.ding4j.policy.Policy;
import org.ding4j.rl.pipeline.Actor;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedActorCritic;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.NativeFloats;
import org.ding4j.torch.NativeOwner;
import org.ding4j.torch.PackedMlp;
import org.ding4j.torch.StateDictReport;
import org.ding4j.torch.Threads;

/**
 * What TD3 and SAC share: an actor and a twin critic ({@code q1}, {@code q2}: MLPs on {@code [obs, action]}, one
 * Adam over both, target copies moved by Polyak averaging), the TD target, the twin critic step, a noise stream
 * kept in the state dict, and DI-engine's state-dict layout ({@code model} with {@code actor.*} and
 * {@code critic.q1.*} / {@code critic.q2.*}, {@code target_model}, one entry per optimizer). Not thread-safe: the
 * learner's thread only (the collector and evaluator act on the same thread in the serial pipeline).
 */
public abstract sealed class ActorCritic implements Policy<ControlBatch>, Actor, AutoCloseable
    permits Td3Policy, SacPolicy
{
    /**
     * The nets and the settings TD3 and SAC share, named as DI-engine's configs name them.
     *
     * @param obs          observation width ({@code model.obs_shape})
     * @param action       action width ({@code model.action_shape})
     * @param actorHidden  the actor's hidden widths ({@code actor_head_hidden_size}, {@code 1 + layer_num} times)
     * @param criticHidden the critics' hidden widths
     * @param batchSize    samples per update
     * @param discount     {@code discount_factor}, in [0, 1]
     * @param tau          {@code target_theta}: the Polyak weight of the online net, in [0, 1]
     * @param lrActor      the actor's Adam learning rate
     * @param lrCritic     the critics' Adam learning rate
     */
    public record Nets(int obs, int action, long[] actorHidden, long[] criticHidden, int batchSize, double discount,
        double tau, double lrActor, double lrCritic)
    {
        /** Checks the values; a wrong one is named with the rule it breaks. */
        public Nets
        {
            actorHidden = Objects.requireNonNull(actorHidden, "actorHidden").clone();
            criticHidden = Objects.requireNonNull(criticHidden, "criticHidden").clone();
            require(obs >= 1, "model.obs_shape", obs, ">= 1");
            require(action >= 1, "model.action_shape", action, ">= 1");
            require(actorHidden.length >= 1 && java.util.Arrays.stream(actorHidden).allMatch(w -> w >= 1),
                "model.actor_head_hidden_size", java.util.Arrays.toString(actorHidden), "widths >= 1");
            require(criticHidden.length >= 1 && java.util.Arrays.stream(criticHidden).allMatch(w -> w >= 1),
                "model.critic_head_hidden_size", java.util.Arrays.toString(criticHidden), "widths >= 1");
            require(batchSize >= 1, "learn.batch_size", batchSize, ">= 1");
            require(discount >= 0 && discount <= 1, "learn.discount_factor", discount, "in [0, 1]");
            require(tau >= 0 && tau <= 1, "learn.target_theta", tau, "in [0, 1]");
            require(lrActor > 0, "learn.learning_rate_actor", lrActor, "> 0");
            require(lrCritic > 0, "learn.learning_rate_critic", lrCritic, "> 0");
        }

        long[] criticSizes()
        {
            return sizes(obs + action, criticHidden, 1);
        }

        static long[] sizes(final long in, final long[] hidden, final long out)
        {
            final long[] sizes = new long[hidden.length + 2];
            sizes[0] = in;
            System.arraycopy(hidden, 0, sizes, 1, hidden.length);
            sizes[sizes.length - 1] = out;
            return sizes;
        }
    }

    static void require(final boolean ok, final String key, final Object value, final String rule)
    {
        if (!ok)
        {
            throw new IllegalArgumentException(key + ": expected " + rule + ", got " + value);
        }
    }

    private static final double MEAN = 1;

    /** The shared settings. */
    protected final Nets nets;
    /** Owns the scalars and noise tensors. */
    protected final NativeOwner natives;
    /** Set while a pipeline's run owns this policy: then only the run closes it. */
    final RunOwnership ownership = new RunOwnership();
    /** The actor: one net, with a target for TD3. */
    final TrainedNets actor;
    /** The twin critic ({@code q1.}, {@code q2.}) with targets. */
    final TrainedNets critic;
    /** Draws every noise an update uses, so that the fused and the autograd path see the same numbers. */
    protected final ResumableRandom noise;
    /** Polyak weight. */
    protected final Scalar tau;
    /** Discount. */
    protected final Scalar gamma;
    /** Updates done (TD3's delay counts them). */
    protected long updates;
    /** The actor's widths, input to output. */
    final long[] actorSizes;
    /** The native fused update when enabled, else null: libtorch autograd runs the update. */
    FusedActorCritic fused;
    /** The fused update's threads (1 or 2). */
    private int updateThreads = 1;
    private ControlBatch boundBatch;
    private FusedActorCritic.Batch binding;
    private boolean freshOptimizer;
    private final PackedMlp actorPlan;
    /** The learner thread's acting on this policy's own actor. */
    private final Acting acting;

    /**
     * @param name        for native ownership messages
     * @param nets        the shared settings
     * @param actorOut    the actor's output width (the action, or mean and log-sigma)
     * @param actorTarget whether the actor keeps a target copy (TD3)
     * @param noiseSeed   the noise stream's seed
     */
    ActorCritic(final String name, final Nets nets, final int actorOut, final boolean actorTarget,
        final long noiseSeed)
    {
        this.nets = Objects.requireNonNull(nets, "nets");
        this.natives = new NativeOwner(name);
        actorSizes = Nets.sizes(nets.obs(), nets.actorHidden(), actorOut);
        actor = new TrainedNets(List.of(""), actorSizes, Activation.RELU, nets.lrActor(), actorTarget);
        critic = new TrainedNets(List.of("q1.", "q2."), nets.criticSizes(), Activation.RELU, nets.lrCritic(), true);
        actorPlan = PackedMlp.sequential(actor.params(), "", actorSizes, Activation.RELU);
        acting = new Acting(actor.params());
        noise = new ResumableRandom(noiseSeed);
        tau = natives.own(new Scalar(nets.tau()));
        gamma = natives.own(new Scalar(nets.discount()));
    }

    /** Refuses a batch of another size or shape before anything runs. */
    final void check(final ControlBatch batch)
    {
        if (null == batch || batch.size() != nets.batchSize() || batch.obsWidth() != nets.obs()
            || batch.actionWidth() != nets.action())
        {
            throw new IllegalArgumentException(getClass().getSimpleName() + ": expected a ControlBatch of "
                + nets.batchSize() + " samples, obs width " + nets.obs() + ", action width " + nets.action() + ", got "
                + (null == batch ? "null" : batch.size() + " samples, obs width " + batch.obsWidth()
                + ", action width " + batch.actionWidth()));
        }
    }

    /** @return {@code [B]} Q of critic {@code k} at {@code (obs, action)} */
    final Tensor q(final int k, final Tensor obs, final Tensor action)
    {
        return critic.net(k).forward(torch.cat(new TensorVector(obs, action), 1)).squeeze(1);
    }

    /** @return {@code [B]} the smaller target Q at {@code (obs, action)} (no autograd) */
    final Tensor targetMin(final Tensor obs, final Tensor action)
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            final Tensor x = torch.cat(new TensorVector(obs, action), 1);
            return torch.minimum(critic.target(0).forward(x).squeeze(1), critic.target(1).forward(x).squeeze(1));
        }
    }

    /** @return {@code reward + gamma * notDone * next} (no autograd) */
    final Tensor tdTarget(final ControlBatch batch, final Tensor next)
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            return batch.rewardTensor().add(batch.notDoneTensor().mul(next), gamma);
        }
    }

    /**
     * The twin critic step: MSE of each critic to the target, summed (DI-engine's critic loss), backward, Adam.
     *
     * @return {@code {loss, mean q1}}
     */
    final double[] criticStep(final ControlBatch batch, final Tensor target)
    {
        critic.params().zeroGrad();
        final Tensor q1 = q(0, batch.obsTensor(), batch.actionTensor());
        final Tensor q2 = q(1, batch.obsTensor(), batch.actionTensor());
        final Tensor loss = torch.mse_loss(q1, target, (long)MEAN).add(torch.mse_loss(q2, target, (long)MEAN));
        loss.backward();
        critic.optimizer().step();
        return new double[] {loss.item_double(), q1.detach().mean().item_double()};
    }

    /**
     * Fills a preallocated noise tensor from the noise stream.
     *
     * @param stage  the Java staging array, one value per element
     * @param target the tensor's data
     * @param sigma  the standard deviation
     * @param clip   values are clamped to [-clip, clip] (infinity for none)
     */
    final void drawNoise(final float[] stage, final FloatPointer target, final double sigma, final double clip)
    {
        for (int i = 0; i < stage.length; i++)
        {
            stage[i] = (float)Math.max(-clip, Math.min(clip, sigma * noise.nextGaussian()));
        }
        target.put(stage);
    }

    /**
     * Chooses how an update runs: one native call for all of it ({@link FusedActorCritic}, the pipeline's default,
     * {@code policy.learn.fused_update}), or libtorch autograd operator by operator (the reference). Both read the
     * same noise and write the same parameters, optimizer states and targets, so checkpoints are the same either way.
     *
     * @param enable whether to use the fused native update
     */
    public final void fusedUpdate(final boolean enable)
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
            fused = newFused();
            fused.threads(updateThreads);
        }
    }

    /**
     * How many threads the fused update runs on: 2 puts the twin critics' halves on a second core (a native helper
     * thread, see {@link FusedActorCritic#threads}); the results are the same bits
     * ({@code policy.learn.update_threads}).
     *
     * @param threads 1 or 2
     */
    public final void updateThreads(final int threads)
    {
        Threads.checkUpdateThreads("update_threads", threads);
        updateThreads = threads;
        if (null != fused)
        {
            fused.threads(threads);
        }
    }

    /** @return whether updates run through the fused native update */
    public final boolean fusedUpdate()
    {
        return null != fused;
    }

    /** @return a fused update over this policy's nets and optimizers */
    abstract FusedActorCritic newFused();

    /** @return the layout the fused update needs */
    final FusedActorCritic.Layout layout(final FusedActorCritic.Kind kind, final double targetEntropy)
    {
        return new FusedActorCritic.Layout(kind, nets.batchSize(), nets.obs(), nets.action(), actorSizes,
            nets.criticSizes(), nets.discount(), nets.tau(), targetEntropy);
    }

    /**
     * @return the fused binding of this batch object: a pipeline refills one batch, so it binds once; another batch
     *         object replaces the binding
     */
    final FusedActorCritic.Batch binding(final ControlBatch batch, final Tensor noise1, final Tensor noise2)
    {
        if (batch != boundBatch)
        {
            binding = fused.bind(batch.obsTensor(), batch.actionTensor(), batch.rewardTensor(), batch.nextObsTensor(),
                batch.notDoneTensor(), noise1, noise2);
            boundBatch = batch;
        }
        return binding;
    }

    @Override
    public final void act(final float[] obs, final int rows, final float[] actions, final ResumableRandom explore)
    {
        acting.act(obs, rows, actions, explore);
    }

    /** @return the actor's forward on packed weights, laid out as {@link #actorParameters()} */
    public final PackedMlp actorPlan()
    {
        return actorPlan;
    }

    /**
     * @param params the flat parameters of this policy's actor or of a copy of it (parallel mode's collector thread)
     * @return an actor for one thread that acts as this policy does with {@code params}' current weights
     */
    public final Actor actingOn(final FlatParameters params)
    {
        return new Acting(params);
    }

    /**
     * Acts through {@link PackedMlp}: each call packs the weights as they are now (the net trains between calls; a
     * 64-wide actor packs in about a microsecond) and runs the forward in one native call, with no allocation once
     * its buffers fit the rows.
     */
    private final class Acting implements Actor
    {
        private final FlatParameters params;
        private final NativeFloats packed = new NativeFloats(actorPlan.packedFloats());
        private final PackedMlp.Scratch scratch = actorPlan.newScratch(1);
        private float[] raw = new float[actorPlan.outputWidth()];

        Acting(final FlatParameters params)
        {
            this.params = Objects.requireNonNull(params, "params");
        }

        @Override
        public void act(final float[] obs, final int rows, final float[] actions, final ResumableRandom explore)
        {
            final int width = actorPlan.outputWidth();
            if (raw.length < rows * width)
            {
                raw = new float[rows * width];
            }
            actorPlan.pack(params, packed);
            actorPlan.forward(packed, obs, rows, raw, scratch);
            for (int r = 0; r < rows; r++)
            {
                for (int k = 0; k < nets.action(); k++)
                {
                    actions[r * nets.action() + k] = (float)action(raw, r * width, k, explore);
                }
            }
        }

        @Override
        public int obsWidth()
        {
            return nets.obs();
        }

        @Override
        public int actionWidth()
        {
            return nets.action();
        }
    }

    /**
     * Maps the actor's output to one action entry: TD3's {@code tanh} (plus clipped exploration noise), SAC's
     * {@code tanh} of the mean (or of a draw from the Gaussian). {@link #act} and a
     * {@link org.ding4j.rl.ServingActor} both go through it.
     *
     * @param raw     the actor's output rows
     * @param row     the first index of this row
     * @param k       the action entry
     * @param explore the exploration stream, or null for the deterministic action
     * @return the action entry in [-1, 1]
     */
    public abstract double action(float[] raw, int row, int k, ResumableRandom explore);

    /** @return the actor's layer widths, observation to output (its output is {@link #actionWidth()} for TD3, twice
     *     that for SAC: means, then log sigmas) */
    public final long[] actorSizes()
    {
        return actorSizes.clone();
    }

    @Override
    public final int obsWidth()
    {
        return nets.obs();
    }

    @Override
    public final int actionWidth()
    {
        return nets.action();
    }

    @Override
    public final int batchSize()
    {
        return nets.batchSize();
    }

    @Override
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> model = new LinkedHashMap<>();
        final Map<String, Object> targetModel = new LinkedHashMap<>();
        actor.exportTo("actor.", model, targetModel);
        critic.exportTo("critic.", model, targetModel);
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("model", model);
        state.put("target_model", targetModel);
        exportOptimizers(state);
        state.put("updates", updates);
        state.put("noise_random", noise.state());
        return state;
    }

    @Override
    public void loadStateDict(final Map<String, Object> state)
    {
        requireSameModel(state);
        for (final String key : optimizerKeys())
        {
            if (!state.containsKey(key) && !freshOptimizer)
            {
                throw new IllegalArgumentException(getClass().getSimpleName() + " state dict: '" + key + "' is "
                    + "missing, so Adam would restart from zero moments; set policy.learn.fresh_optimizer_on_resume: "
                    + "true to accept that");
            }
        }
        // Checked before anything changes: -1 would shift TD3's actor turns; a failed load leaves the policy as it was.
        final String what = getClass().getSimpleName() + " state dict";
        final long done = StateFields.integer(what, state, "updates");
        final long noiseState = StateFields.integer(what, state, "noise_random");
        if (done < 0)
        {
            throw new IllegalArgumentException(what + ": 'updates' must be >= 0, got " + done);
        }
        final Map<?, ?> model = section(state, "model");
        final Map<?, ?> targetModel = section(state, "target_model");
        actor.importFrom("actor.", model, targetModel);
        critic.importFrom("critic.", model, targetModel);
        updates = done;
        noise.state(noiseState);
        importOptimizers(state);
    }

    /**
     * Refuses a checkpoint whose model is another net's (another algorithm's, other widths) before anything else of
     * it is checked.
     *
     * @param state a checkpoint
     * @throws IllegalArgumentException naming the missing, unexpected and mismatched keys
     */
    final void requireSameModel(final Map<String, Object> state)
    {
        final Map<String, long[]> shapes = new LinkedHashMap<>(actor.modelShapes("actor."));
        shapes.putAll(critic.modelShapes("critic."));
        StateDictReport.requireSameModel(getClass().getSimpleName(), shapes, section(state, "model"));
    }

    /**
     * Loads the actor alone from a checkpoint's {@code model} section: what acting needs ({@code ding4j eval}, a
     * service), so a file without the critics' targets, the optimizers or the noise stream (saved from Python, say)
     * serves too. Training on from it needs {@link #loadStateDict}.
     *
     * @param state a checkpoint
     * @throws IllegalArgumentException if it has no {@code model} dict, holds names this policy's model has not (a
     *                                  checkpoint of another algorithm whose actor has the same shapes), or the
     *                                  actor's tensors in it do not fit
     */
    public void loadActor(final Map<String, Object> state)
    {
        final Map<?, ?> model = section(state, "model");
        final java.util.Set<String> own = new java.util.HashSet<>();
        try (org.bytedeco.javacpp.PointerScope scope = new org.bytedeco.javacpp.PointerScope())
        {
            own.addAll(((Map<?, ?>)stateDict().get("model")).keySet().stream().map(String::valueOf).toList());
        }
        final List<String> foreign = model.keySet().stream().map(String::valueOf).filter(k -> !own.contains(k))
            .sorted().toList();
        if (!foreign.isEmpty())
        {
            throw new IllegalArgumentException("model: " + getClass().getSimpleName() + "'s model has no "
                + foreign.subList(0, Math.min(5, foreign.size())) + (foreign.size() > 5 ? " (" + foreign.size()
                + " such names)" : "") + ": a checkpoint of another algorithm or net, whose actor alone would load");
        }
        try
        {
            actor.importParams("actor.", model);
        }
        catch (final IllegalArgumentException ex)
        {
            // The strict load names the entries without their prefix: say which net, and the likely cause.
            throw new IllegalArgumentException("model: " + getClass().getSimpleName() + "'s actor does not fit the "
                + "checkpoint's 'actor.' entries (named below without 'actor.'; a checkpoint of another algorithm or "
                + "net size?): " + ex.getMessage(), ex);
        }
    }

    /** @return the state-dict keys of the optimizers, in the order {@link #optimizers()} gives them */
    abstract List<String> optimizerKeys();

    /** @return every optimizer this policy steps, in {@link #optimizerKeys()} order */
    public abstract List<FusedAdam> optimizers();

    /** Exports the optimizers under their keys. */
    private void exportOptimizers(final Map<String, Object> state)
    {
        final List<String> keys = optimizerKeys();
        final List<FusedAdam> optimizers = optimizers();
        for (int i = 0; i < keys.size(); i++)
        {
            state.put(keys.get(i), optimizers.get(i).stateDict());
        }
    }

    /** Loads the optimizers present under their keys. */
    @SuppressWarnings("unchecked")
    private void importOptimizers(final Map<String, Object> state)
    {
        final List<String> keys = optimizerKeys();
        final List<FusedAdam> optimizers = optimizers();
        for (int i = 0; i < keys.size(); i++)
        {
            if (state.get(keys.get(i)) instanceof Map<?, ?> dict)
            {
                optimizers.get(i).loadStateDict((Map<String, Object>)dict);
            }
        }
    }

    private Map<?, ?> section(final Map<String, Object> state, final String key)
    {
        return StateFields.section(getClass().getSimpleName() + " state dict", state, key);
    }

    /**
     * @param allow whether {@link #loadStateDict} may take a state without the optimizers (Adam then starts
     *              afresh); refused by default, since a resume would silently lose the moments
     */
    public final void allowFreshOptimizer(final boolean allow)
    {
        this.freshOptimizer = allow;
    }

    /** @return the actor's flat parameters */
    public final FlatParameters actorParameters()
    {
        return actor.params();
    }

    /** @return the twin critic's flat parameters ({@code q1.*} then {@code q2.*}) */
    public final FlatParameters criticParameters()
    {
        return critic.params();
    }

    /** @return the twin critic's target parameters */
    public final FlatParameters criticTargetParameters()
    {
        return critic.targetParams();
    }

    /** @return every target net's parameters (TD3's actor target, then the critics'): what a data-parallel run
     *     broadcasts beside the optimizers' parameters so that every rank starts from rank 0's */
    public final List<FlatParameters> targetParameters()
    {
        final FlatParameters actorTarget = actor.targetParams();
        return null == actorTarget ? List.of(critic.targetParams()) : List.of(actorTarget, critic.targetParams());
    }

    /**
     * Moves the update's noise stream to a new state: a data-parallel rank other than 0, resumed from rank 0's
     * checkpoint, takes a stream of its own instead of drawing rank 0's noise again.
     *
     * @param state the stream's new state
     */
    public final void restartNoise(final long state)
    {
        noise.state(state);
    }

    /** @return the shared settings */
    public final Nets nets()
    {
        return nets;
    }

    /** @return updates done */
    public final long updates()
    {
        return updates;
    }

    /**
     * Frees the nets, the optimizers and the tensors.
     * Once closed, a later close does nothing.
     *
     * @throws IllegalStateException while a pipeline's run owns this policy (the run closes it when it ends)
     */
    @Override
    public final void close()
    {
        if (!ownership.startClose(getClass().getSimpleName()))
        {
            return;
        }
        closeOwn();
        if (null != fused)
        {
            fused.close();
        }
        actor.close();
        critic.close();
        natives.close();
    }

    /** Frees what a subclass holds beyond the nets (SAC's temperature and its optimizer), before them. */
    void closeOwn()
    {
    }
}
