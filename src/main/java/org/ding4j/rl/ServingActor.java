package org.ding4j.rl;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import org.ding4j.env.ResumableRandom;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.LearnerHook;
import org.ding4j.learner.BaseLearner;
import org.ding4j.policy.Policy;
import org.ding4j.rl.ac.ActorCritic;
import org.ding4j.rl.dqn.DqnPolicy;
import org.ding4j.rl.ppo.PpoPolicy;
import org.ding4j.serve.PublishedWeights;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.NativeFloats;
import org.ding4j.torch.PackedMlp;

/**
 * Actions for a service's threads on the latest weights while training goes on: DQN's greedy action, TD3's and SAC's
 * deterministic or sampled action, PPO's deterministic action (the most likely index, or the Gaussian's mean clipped
 * to [-1, 1]). The training thread {@link #publish}es the policy's acting net (or has it published on its learner's
 * schedule, {@link #publishOn}) into a {@link PublishedWeights} seqlock, packed for {@link PackedMlp}'s native
 * forward; any number of threads call {@link #act} and {@link #sample}, batch 1 or batch N, each computing the net's
 * forward on one publish (never a mix of two), with no lock and no allocation (each thread keeps its scratch; a
 * larger batch than before grows it once).
 * <p>
 * Thread contract: {@link #publish} on the training thread while the policy is open; the rest from any thread, also
 * after the policy is closed (they read only the published copy).
 */
public final class ServingActor
{
    /** One thread's buffers: the forward's scratch, its output rows, one action row for {@link #greedy}. */
    private static final class Rows
    {
        private final PackedMlp.Scratch scratch;
        private float[] out;
        private final float[] action = new float[1];

        Rows(final PackedMlp plan)
        {
            scratch = plan.newScratch(1);
            out = new float[plan.outputWidth()];
        }
    }

    private final PublishedWeights weights;
    private final PackedMlp plan;
    private final Consumer<NativeFloats> pack;
    /** The acting net's parameters, which {@link #pack} copies. */
    private final FlatParameters served;
    private final ActorCritic continuous;
    /** PPO's Gaussian head: the action is the output (the mean) clipped to [-1, 1]. */
    private final boolean clippedMean;
    private final int obsWidth;
    private final int outWidth;
    private final int actionWidth;
    private final ThreadLocal<Rows> scratch;

    private ServingActor(final FlatParameters params, final PackedMlp plan, final ActorCritic continuous,
        final boolean clippedMean, final int actionWidth)
    {
        this.plan = plan;
        this.clippedMean = clippedMean;
        this.weights = new PublishedWeights(plan.packedFloats());
        this.served = params;
        this.pack = into -> plan.pack(params, into);
        this.continuous = continuous;
        this.obsWidth = plan.inputWidth();
        this.outWidth = plan.outputWidth();
        this.actionWidth = actionWidth;
        this.scratch = ThreadLocal.withInitial(() -> new Rows(plan));
        publish("ServingActor: the policy is closed (its run ended, or it was the evaluation's), so there are no "
            + "weights to serve: serve a saved checkpoint instead (OffPolicyPipeline.forEvaluation(config)"
            + ".serve(state)), or make the actor before the run ends: ");
    }

    /**
     * Serves a DQN policy's greedy action from its online net.
     *
     * @param policy the policy (its online net is published now)
     * @return the serving actor
     */
    public static ServingActor greedy(final DqnPolicy policy)
    {
        final DqnPolicy.Settings s = policy.settings();
        final FlatParameters params = policy.parameters();
        final long[] offsets = DqnPolicy.layerOffsets(params, s.hidden(), s.dueling());
        final int act = Activation.TANH == s.activation() ? PackedMlp.TANH : PackedMlp.RELU;
        final List<PackedMlp.Layer> layers = new ArrayList<>();
        int in = s.obs();
        for (int l = 0; l < s.hidden().length; l++)
        {
            layers.add(new PackedMlp.Layer(offsets[2 * l], offsets[2 * l + 1], in, (int)s.hidden()[l], act, l - 1));
            in = (int)s.hidden()[l];
        }
        final int h = in;
        final int trunk = layers.size() - 1;
        final int at = 2 * layers.size();
        layers.add(new PackedMlp.Layer(offsets[at], offsets[at + 1], h, h, act, trunk));
        layers.add(new PackedMlp.Layer(offsets[at + 2], offsets[at + 3], h, s.actions(), PackedMlp.IDENTITY,
            trunk + 1));
        if (s.dueling())
        {
            layers.add(new PackedMlp.Layer(offsets[at + 4], offsets[at + 5], h, h, act, trunk));
            layers.add(new PackedMlp.Layer(offsets[at + 6], offsets[at + 7], h, 1, PackedMlp.IDENTITY, trunk + 3));
        }
        return new ServingActor(params, new PackedMlp(layers, s.dueling()), null, false, 1);
    }

    /**
     * Serves a TD3 or SAC policy's action from its actor.
     *
     * @param policy the policy (its actor is published now)
     * @return the serving actor
     */
    public static ServingActor of(final ActorCritic policy)
    {
        return new ServingActor(policy.actorParameters(), policy.actorPlan(), policy, false, policy.actionWidth());
    }

    /**
     * Serves a PPO policy's deterministic action from its actor: a categorical head's most likely index (as
     * {@link #greedy}), a Gaussian head's mean clipped to [-1, 1]. Sampling is the rollout's, not served.
     *
     * @param policy the policy (its actor is published now)
     * @return the serving actor
     */
    public static ServingActor of(final PpoPolicy policy)
    {
        final PpoPolicy.Settings s = policy.settings();
        return new ServingActor(policy.parameters(), policy.actorPlan(), null, !s.discrete(),
            s.discrete() ? 1 : s.actions());
    }

    /**
     * Serves whichever shipped policy this is ({@link #greedy} for DQN, {@link #of(ActorCritic)} for TD3 and SAC,
     * {@link #of(PpoPolicy)} for PPO): what a pipeline's learner hands over, as in
     * {@code pipeline.onLearner(learner -> ServingActor.of(learner.policy()))}.
     *
     * @param policy the policy (its acting net is published now)
     * @return the serving actor
     * @throws IllegalArgumentException naming the policy's class if it is none of the shipped ones
     */
    public static ServingActor of(final Policy<?> policy)
    {
        if (policy instanceof DqnPolicy dqn)
        {
            return greedy(dqn);
        }
        if (policy instanceof ActorCritic actorCritic)
        {
            return of(actorCritic);
        }
        if (policy instanceof PpoPolicy ppo)
        {
            return of(ppo);
        }
        throw new IllegalArgumentException("policy: expected DqnPolicy, Td3Policy, SacPolicy or PpoPolicy, got "
            + (null == policy ? "null" : policy.getClass().getName()));
    }

    /**
     * Copies the policy's current weights for the readers (the training thread, while the policy is open).
     *
     * @throws IllegalStateException if the policy is closed (its run ended, or it was the evaluation's): the readers
     *     keep the last publish
     */
    public void publish()
    {
        publish("ServingActor.publish: the policy it serves is closed, so the readers keep the last publish "
            + "(publishOn publishes a run's last updates as it ends): ");
    }

    /** Publishes; a closed policy's failure is rethrown with {@code whenClosed} before its own message. */
    private void publish(final String whenClosed)
    {
        try
        {
            weights.publish(pack);
        }
        catch (final IllegalStateException closed)
        {
            throw new IllegalStateException(whenClosed + closed.getMessage(), closed);
        }
    }

    /**
     * Publishes on the learner's schedule: once its run has started (after {@code before_run}'s other hooks, so a
     * resumed run's loaded weights, not the fresh net's), after every {@code updates}-th update, and when the run ends
     * (after {@code after_run}'s other hooks: its last updates). Weights with a non-finite value (a diverged update's)
     * are never published: the readers keep the last finite publish.
     *
     * @param learner the policy's learner (a pipeline's hands it over in {@code onLearner})
     * @param updates publish after every this many updates (>= 1)
     * @throws IllegalStateException if the learner is closed (its run ended: there is nothing more to publish)
     */
    public void publishOn(final BaseLearner<?> learner, final int updates)
    {
        Objects.requireNonNull(learner, "learner");
        if (updates < 1)
        {
            throw new IllegalArgumentException("updates: expected >= 1, got " + updates);
        }
        // Last at the run's start and end, whatever the priorities of the hooks that load or change weights there.
        learner.registerHook(new PublishHook(HookPosition.BEFORE_RUN, Integer.MAX_VALUE, ignored -> true));
        learner.registerHook(new PublishHook(HookPosition.AFTER_ITER, HookRegistry.SIMPLIFIED_PRIORITY + 30,
            context -> 0 == context.lastIter() % updates));
        learner.registerHook(new PublishHook(HookPosition.AFTER_RUN, Integer.MAX_VALUE, ignored -> true));
    }

    /** A publish at one of the learner's hook positions, when the condition holds. */
    private final class PublishHook extends LearnerHook
    {
        private final java.util.function.Predicate<HookContext> when;

        PublishHook(final HookPosition position, final int priority,
            final java.util.function.Predicate<HookContext> when)
        {
            super("serving_actor_publish", priority, position);
            this.when = when;
        }

        @Override
        public void call(final HookContext context)
        {
            // Never a diverged update's weights: the readers keep the last finite publish.
            if (when.test(context) && served.allFinite())
            {
                publish();
            }
        }
    }

    /** @return how many publishes the readers have seen complete */
    public long version()
    {
        return weights.version();
    }

    /** @return floats per observation */
    public int obsWidth()
    {
        return obsWidth;
    }

    /** @return whether actions are indices ({@link #greedy} serves them): DQN's and a categorical PPO's */
    public boolean discrete()
    {
        return null == continuous && !clippedMean;
    }

    /** @return floats per action (1 for DQN: the index) */
    public int actionWidth()
    {
        return actionWidth;
    }

    /**
     * The deterministic action of each observation row: DQN's and a categorical PPO's greedy index (ties to the
     * lowest), TD3's and SAC's {@code tanh} action in [-1, 1], a Gaussian PPO's mean clipped to [-1, 1].
     *
     * @param obs     {@code [rows, obs]} row-major: its first {@code rows * obsWidth()} floats are read (a longer
     *                array is a buffer with room to spare)
     * @param rows    rows, >= 1
     * @param actions receives {@code [rows, actionWidth]}
     * @throws IllegalArgumentException if an array is too short or an observation is not finite (the net's ReLU would
     *     read a NaN as 0 and answer with a confident action)
     */
    public void act(final float[] obs, final int rows, final float[] actions)
    {
        final float[] out = forward(obs, rows, actions);
        if (clippedMean)
        {
            for (int i = 0; i < rows * actionWidth; i++)
            {
                actions[i] = Math.max(-1f, Math.min(1f, out[i]));
            }
            return;
        }
        if (null == continuous)
        {
            for (int r = 0; r < rows; r++)
            {
                int best = 0;
                for (int a = 1; a < outWidth; a++)
                {
                    if (out[r * outWidth + a] > out[r * outWidth + best])
                    {
                        best = a;
                    }
                }
                actions[r] = best;
            }
            return;
        }
        map(out, rows, actions, null);
    }

    /**
     * @param obs one observation
     * @return DQN's (or a categorical PPO's) greedy action for it
     * @throws IllegalStateException for a continuous actor (use {@link #act})
     */
    public int greedy(final float[] obs)
    {
        if (!discrete())
        {
            throw new IllegalStateException("greedy: a TD3, SAC or Gaussian PPO actor has continuous actions; use act");
        }
        final float[] action = scratch.get().action;
        act(obs, 1, action);
        return (int)action[0];
    }

    /**
     * TD3's exploring action (with its clipped Gaussian noise) or a draw from SAC's squashed Gaussian.
     *
     * @param obs     {@code [rows, obs]} row-major (its first {@code rows * obsWidth()} floats)
     * @param rows    rows
     * @param actions receives {@code [rows, actionWidth]} in [-1, 1]
     * @param random  the caller's stream (one per thread)
     * @throws IllegalStateException for a DQN or PPO actor (deterministic only)
     * @throws IllegalArgumentException as {@link #act} does
     */
    public void sample(final float[] obs, final int rows, final float[] actions, final ResumableRandom random)
    {
        if (null == continuous)
        {
            throw new IllegalStateException("sample: a DQN or PPO actor serves its deterministic action; use act");
        }
        Objects.requireNonNull(random, "random");
        map(forward(obs, rows, actions), rows, actions, random);
    }

    private void map(final float[] out, final int rows, final float[] actions, final ResumableRandom random)
    {
        for (int r = 0; r < rows; r++)
        {
            for (int k = 0; k < actionWidth; k++)
            {
                actions[r * actionWidth + k] = (float)continuous.action(out, r * outWidth, k, random);
            }
        }
    }

    /**
     * @return the net's output rows, computed on one whole publish (retried if a publish overwrote it meanwhile), once
     *     the arguments are checked: nothing is written to {@code actions} when they do not fit
     */
    private float[] forward(final float[] obs, final int rows, final float[] actions)
    {
        if (rows < 1)
        {
            throw new IllegalArgumentException("rows: expected >= 1, got " + rows);
        }
        if (obs.length < (long)rows * obsWidth)
        {
            throw new IllegalArgumentException("obs: expected " + rows + " rows of " + obsWidth + " floats, got "
                + obs.length + " floats");
        }
        if (actions.length < (long)rows * actionWidth)
        {
            throw new IllegalArgumentException("actions: expected room for " + rows + " rows of " + actionWidth
                + " floats, got " + actions.length + " floats");
        }
        for (int i = 0; i < rows * obsWidth; i++)
        {
            if (!Float.isFinite(obs[i]))
            {
                throw new IllegalArgumentException("obs: expected finite values, got " + obs[i] + " at row "
                    + i / obsWidth + ", index " + i % obsWidth);
            }
        }
        final Rows s = scratch.get();
        if (s.out.length < rows * outWidth)
        {
            s.out = new float[rows * outWidth];
        }
        while (true)
        {
            final long stamp = weights.tryRead();
            if (stamp < 0)
            {
                Thread.onSpinWait();
                continue;
            }
            plan.forward(weights.buffer(stamp), obs, rows, s.out, s.scratch);
            if (weights.validate(stamp))
            {
                return s.out;
            }
        }
    }
}
