package org.ding4j.example;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.ding4j.env.ResumableRandom;
import org.ding4j.example.ac.ActorCritic;
import org.ding4j.example.dqn.DqnPolicy;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.serve.DenseForward;
import org.ding4j.serve.PublishedWeights;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;

/**
 * Actions for a service's threads on the latest weights while training goes on: DQN's greedy action, TD3's and SAC's
 * deterministic or sampled action. The training thread {@link #publish}es the policy's acting net (or registers
 * {@link #publishEvery}) into a {@link PublishedWeights} seqlock; any number of threads call {@link #act} and
 * {@link #sample}, batch 1 or batch N, each computing the net's forward in Java on a consistent copy of one publish
 * (never a mix of two), with no lock and no allocation (each thread keeps its scratch rows; a larger batch than
 * before grows them once).
 * <p>
 * Thread contract: {@link #publish} on the training thread while the policy is open; the rest from any thread, also
 * after the policy is closed (they read only the published copy).
 */
public final class ServingActor
{
    /** One dense layer: where its weight and bias start, its widths and activation. */
    private record Layer(int w, int b, int in, int out, int act)
    {
    }

    private final PublishedWeights weights;
    private final FloatPointer source;
    private final Layer[] trunk;
    private final Layer[] advantage;
    private final Layer[] value;
    private final ActorCritic continuous;
    private final int obsWidth;
    private final int outWidth;
    private final int actionWidth;
    private final int maxWidth;
    private final ThreadLocal<float[][]> scratch;

    private ServingActor(final FlatParameters params, final Layer[] trunk, final Layer[] advantage,
        final Layer[] value, final ActorCritic continuous, final int obsWidth, final int actionWidth)
    {
        if (1 != params.groupCount() || !params.group(0).isCpuFloat32())
        {
            throw new IllegalArgumentException("ServingActor: expected the net's parameters in one CPU float32 group, "
                + "got " + params.groupCount() + " group(s)" + (1 == params.groupCount() ? " not on the CPU in float32"
                : ""));
        }
        this.weights = new PublishedWeights((int)params.group(0).numel());
        this.source = new FloatPointer(params.group(0).values().data_ptr());
        this.trunk = trunk;
        this.advantage = advantage;
        this.value = value;
        this.continuous = continuous;
        this.obsWidth = obsWidth;
        this.actionWidth = actionWidth;
        final Layer last = null == advantage ? trunk[trunk.length - 1] : advantage[advantage.length - 1];
        this.outWidth = last.out();
        int widest = obsWidth;
        for (final Layer[] layers : new Layer[][] {trunk, advantage, value})
        {
            for (final Layer layer : null == layers ? new Layer[0] : layers)
            {
                widest = Math.max(widest, layer.out());
            }
        }
        this.maxWidth = widest;
        this.scratch = ThreadLocal.withInitial(() -> rows(1));
        publish();
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
        final int act = Activation.TANH == s.activation() ? DenseForward.TANH : DenseForward.RELU;
        final Layer[] trunk = new Layer[s.hidden().length];
        int in = s.obs();
        for (int l = 0; l < trunk.length; l++)
        {
            trunk[l] = new Layer((int)offsets[2 * l], (int)offsets[2 * l + 1], in, (int)s.hidden()[l], act);
            in = (int)s.hidden()[l];
        }
        final int h = in;
        final int at = 2 * trunk.length;
        final Layer[] advantage = {new Layer((int)offsets[at], (int)offsets[at + 1], h, h, act),
            new Layer((int)offsets[at + 2], (int)offsets[at + 3], h, s.actions(), DenseForward.IDENTITY)};
        final Layer[] value = s.dueling() ? new Layer[] {new Layer((int)offsets[at + 4], (int)offsets[at + 5], h, h,
            act), new Layer((int)offsets[at + 6], (int)offsets[at + 7], h, 1, DenseForward.IDENTITY)} : null;
        return new ServingActor(params, trunk, advantage, value, null, s.obs(), 1);
    }

    /**
     * Serves a TD3 or SAC policy's action from its actor.
     *
     * @param policy the policy (its actor is published now)
     * @return the serving actor
     */
    public static ServingActor of(final ActorCritic policy)
    {
        final FlatParameters params = policy.actorParameters();
        final long[] sizes = policy.actorSizes();
        final List<String> names = params.names();
        final List<Layer> layers = new ArrayList<>();
        for (int l = 0; l + 1 < sizes.length; l++)
        {
            final int w = names.indexOf(2 * l + ".weight");
            final int b = names.indexOf(2 * l + ".bias");
            if (w < 0 || b < 0)
            {
                throw new IllegalArgumentException("ServingActor: the actor has no layer " + 2 * l + " (" + names
                    + ")");
            }
            layers.add(new Layer((int)params.offset(w), (int)params.offset(b), (int)sizes[l], (int)sizes[l + 1],
                l + 2 < sizes.length ? DenseForward.RELU : DenseForward.IDENTITY));
        }
        return new ServingActor(params, layers.toArray(new Layer[0]), null, null, policy, policy.obsWidth(),
            policy.actionWidth());
    }

    /** Copies the policy's current weights for the readers (the training thread, while the policy is open). */
    public void publish()
    {
        weights.publish(source);
    }

    /**
     * @param updates publish after every this many updates
     * @return an {@code after_iter} hook that publishes; register it on the policy's learner
     */
    public LearnerHook publishEvery(final int updates)
    {
        if (updates < 1)
        {
            throw new IllegalArgumentException("updates: expected >= 1, got " + updates);
        }
        return new LearnerHook("serving_actor_publish", 50, HookPosition.AFTER_ITER)
        {
            @Override
            public void call(final HookContext context)
            {
                if (0 == context.lastIter() % updates)
                {
                    publish();
                }
            }
        };
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

    /** @return floats per action (1 for DQN: the index) */
    public int actionWidth()
    {
        return actionWidth;
    }

    /**
     * The deterministic action of each observation row: DQN's greedy index (ties to the lowest), TD3's and SAC's
     * {@code tanh} action in [-1, 1].
     *
     * @param obs     {@code [rows, obs]} row-major
     * @param rows    rows, >= 1
     * @param actions receives {@code [rows, actionWidth]}
     */
    public void act(final float[] obs, final int rows, final float[] actions)
    {
        final float[] out = forward(obs, rows);
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
     * @return DQN's greedy action for it
     * @throws IllegalStateException for a TD3 or SAC actor (use {@link #act})
     */
    public int greedy(final float[] obs)
    {
        if (null != continuous)
        {
            throw new IllegalStateException("greedy: a TD3 or SAC actor has continuous actions; use act");
        }
        final float[][] rows = scratch.get();
        act(obs, 1, rows[5]);
        return (int)rows[5][0];
    }

    /**
     * TD3's exploring action (with its clipped Gaussian noise) or a draw from SAC's squashed Gaussian.
     *
     * @param obs     {@code [rows, obs]} row-major
     * @param rows    rows
     * @param actions receives {@code [rows, actionWidth]} in [-1, 1]
     * @param random  the caller's stream (one per thread)
     * @throws IllegalStateException for a DQN actor (greedy only)
     */
    public void sample(final float[] obs, final int rows, final float[] actions, final ResumableRandom random)
    {
        if (null == continuous)
        {
            throw new IllegalStateException("sample: a DQN actor is greedy; use act");
        }
        map(forward(obs, rows), rows, actions, Objects.requireNonNull(random, "random"));
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

    /** @return the net's output rows, computed on one whole publish (retried if a publish overwrote it meanwhile) */
    private float[] forward(final float[] obs, final int rows)
    {
        if (rows < 1 || obs.length < rows * obsWidth)
        {
            throw new IllegalArgumentException("obs: expected " + rows + " rows of " + obsWidth + " floats, got "
                + obs.length + " floats");
        }
        float[][] s = scratch.get();
        if (s[0].length < rows * maxWidth)
        {
            s = rows(rows);
            scratch.set(s);
        }
        while (true)
        {
            final long stamp = weights.tryRead();
            if (stamp < 0)
            {
                Thread.onSpinWait();
                continue;
            }
            final float[] out = compute(weights.buffer(stamp), obs, rows, s);
            if (weights.validate(stamp))
            {
                return out;
            }
        }
    }

    private float[] compute(final float[] p, final float[] obs, final int rows, final float[][] s)
    {
        float[] x = obs;
        int flip = 0;
        for (final Layer l : trunk)
        {
            final float[] y = s[flip];
            DenseForward.layer(p, l.w(), l.b(), l.in(), l.out(), x, y, rows, l.act());
            x = y;
            flip ^= 1;
        }
        if (null == advantage)
        {
            return x;
        }
        final float[] hidden = s[2];
        final float[] a = s[3];
        DenseForward.layer(p, advantage[0].w(), advantage[0].b(), advantage[0].in(), advantage[0].out(), x, hidden,
            rows, advantage[0].act());
        DenseForward.layer(p, advantage[1].w(), advantage[1].b(), advantage[1].in(), advantage[1].out(), hidden, a,
            rows, DenseForward.IDENTITY);
        if (null == value)
        {
            return a;
        }
        final float[] v = s[4];
        DenseForward.layer(p, value[0].w(), value[0].b(), value[0].in(), value[0].out(), x, hidden, rows,
            value[0].act());
        DenseForward.layer(p, value[1].w(), value[1].b(), value[1].in(), 1, hidden, v, rows, DenseForward.IDENTITY);
        // Q = V + (A - mean A), as the Q-network's dueling head.
        for (int r = 0; r < rows; r++)
        {
            float mean = 0;
            for (int k = 0; k < outWidth; k++)
            {
                mean += a[r * outWidth + k];
            }
            mean /= outWidth;
            for (int k = 0; k < outWidth; k++)
            {
                a[r * outWidth + k] = v[r] + (a[r * outWidth + k] - mean);
            }
        }
        return a;
    }

    /** Scratch for {@code rows}: two trunk rows, the head's hidden, A, V, and one action row for {@link #greedy}. */
    private float[][] rows(final int rows)
    {
        final int n = rows * maxWidth;
        return new float[][] {new float[n], new float[n], new float[n], new float[n], new float[rows], new float[1]};
    }
}
