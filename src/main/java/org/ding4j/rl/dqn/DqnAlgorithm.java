package org.ding4j.rl.dqn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Module;
import org.ding4j.checkpoint.StateFields;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.env.Discrete;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.internal.Closing;
import org.ding4j.learner.BaseLearner;
import org.ding4j.policy.Policy;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.rl.pipeline.ActingCopy;
import org.ding4j.rl.pipeline.OffPolicyAlgorithm;
import org.ding4j.rl.pipeline.OffPolicyParts;
import org.ding4j.rl.pipeline.Replay;
import org.ding4j.rl.pipeline.RunStream;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.Seeding;

/**
 * DQN ({@code policy.type: dqn}, the default) as the one off-policy pipeline takes it, on any environment with a
 * {@link Discrete} action space, as DI-engine's {@code serial_pipeline(cartpole_dqn_config)} runs it: collect
 * {@code n_sample} transitions epsilon-greedily (n-step returns), push them, then {@code update_per_collect} times
 * sample a batch (uniform or prioritized), train it and feed the priorities back; evaluate greedily on the same seeded
 * starts each time. Its defaults are {@code examples/cartpole_dqn.yaml}; in parallel mode the collector thread acts
 * with a second Q-network refreshed from the online one.
 */
public final class DqnAlgorithm implements OffPolicyAlgorithm
{
    /** The embedded defaults on the class path. */
    public static final String DEFAULT_CONFIG = "org/ding4j/examples/cartpole_dqn.yaml";

    /** Bounds of the counts that size arrays and tensors (a larger value is refused with its key). */
    private static final long MAX_NSTEP = 10_000;
    private static final long MAX_WIDTH = 1 << 16;
    private static final long MAX_LOADER_WORKERS = 256;

    @Override
    public String name()
    {
        return "dqn";
    }

    @Override
    public String defaults()
    {
        return DEFAULT_CONFIG;
    }

    @Override
    public void rules(final ConfigSchema.Builder schema)
    {
        schema.rule("policy.type", v -> "dqn".equals(v) ? null : "expected dqn")
            .rule("policy.model.encoder_hidden_size_list", DqnAlgorithm::positiveWidths)
            .rule("policy.model.activation", v -> v instanceof String s && null != Activation.spelled(s) ? null
                : "expected " + Activation.CHOICES)
            .rule("policy.nstep", ValueRule.integerIn(1, MAX_NSTEP))
            .rule("policy.discount_factor", v -> v instanceof Number n && n.doubleValue() >= 0
                && n.doubleValue() <= 1 ? null : "expected a number in [0, 1]")
            .rule("policy.learn.learning_rate", ValueRule.LEARNING_RATE)
            .rule("policy.learn.target_update_freq", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("policy.learn.target_theta", v -> v instanceof Number n && n.doubleValue() >= 0
                && n.doubleValue() <= 1 ? null : "expected a number in [0, 1]")
            .rule("policy.learn.loss", v -> "mse".equals(v) || "huber".equals(v) ? null : "expected mse or huber")
            .rule("policy.learn.grad_clip", v -> v instanceof Number n && n.doubleValue() >= 0 ? null
                : "expected a number >= 0")
            .rule("policy.other.eps.type", v -> "exp".equals(v) ? null : "expected exp (exponential decay)")
            .rule("policy.other.eps.decay", ValueRule.POSITIVE_NUMBER)
            .rule("pipeline.warmup_updates", ValueRule.integerIn(0, Integer.MAX_VALUE));
    }

    private static String positiveWidths(final Object v)
    {
        final String expected = "expected a non-empty list of integers in [1, " + MAX_WIDTH + "]";
        if (!(v instanceof List<?> list) || list.isEmpty())
        {
            return expected;
        }
        for (final Object w : list)
        {
            if (!(w instanceof Long l) || l < 1 || l > MAX_WIDTH)
            {
                return expected;
            }
        }
        return null;
    }

    /** The env's spaces: a {@link Discrete} action space of {@code action_shape} actions, the observation width. */
    @Override
    public void check(final Config cfg)
    {
        final Config learner = BaseLearner.checkConfig(cfg.child("learner"));
        final String workers = ValueRule.integerIn(0, MAX_LOADER_WORKERS).check(learner.get("dataloader.num_workers"));
        if (null != workers)
        {
            throw new ConfigException("learner.dataloader.num_workers", workers + ", got "
                + learner.get("dataloader.num_workers"));
        }
        final EnvTypes.Spaces spaces = EnvTypes.spaces(cfg);
        if (!(spaces.action() instanceof Discrete discrete))
        {
            throw new ConfigException("env.type", "expected an environment with a Discrete action space (DQN picks "
                + "one of n actions), got " + cfg.getString("env.type") + " with " + spaces.action());
        }
        EnvTypes.checkWidth(cfg, "policy.model.obs_shape", spaces.observation().flatSize(), "observation width");
        EnvTypes.checkWidth(cfg, "policy.model.action_shape", discrete.n(), "actions");
    }

    /** The Q-network: encoder, advantage head (value head when dueling), each Linear's weights and bias. */
    @Override
    public long parameterCount(final Config cfg)
    {
        long count = 0;
        long in = cfg.getLong("policy.model.obs_shape");
        for (final Object width : cfg.getList("policy.model.encoder_hidden_size_list"))
        {
            final long out = ((Number)width).longValue();
            count += (in + 1) * out;
            in = out;
        }
        final long head = (in + 1) * in;
        count += head + (in + 1) * cfg.getLong("policy.model.action_shape");
        return cfg.getBoolean("policy.model.dueling") ? count + head + in + 1 : count;
    }

    @Override
    public long bytesPerTransition(final Config cfg)
    {
        return ReplayBuffer.bytesPerTransition(cfg.getInt("policy.model.obs_shape"));
    }

    @Override
    public void warmUp(final Config cfg)
    {
        WarmUp.run(cfg, cfg.getInt("pipeline.warmup_updates"));
    }

    /**
     * @param cfg an effective DQN config
     * @return the policy's settings from its {@code policy.*} (net shape, activation, loss)
     */
    public static DqnPolicy.Settings policySettings(final Config cfg)
    {
        final List<Object> widths = cfg.getList("policy.model.encoder_hidden_size_list");
        final long[] hidden = new long[widths.size()];
        for (int i = 0; i < hidden.length; i++)
        {
            hidden[i] = ((Number)widths.get(i)).longValue();
        }
        return DqnPolicy.Settings.builder(cfg.getInt("policy.model.obs_shape"), cfg.getInt("policy.model.action_shape"))
            .hidden(hidden)
            .dueling(cfg.getBoolean("policy.model.dueling"))
            .batchSize(cfg.getInt("policy.learn.batch_size"))
            .learningRate(cfg.getDouble("policy.learn.learning_rate"))
            .targetUpdateFreq(cfg.getInt("policy.learn.target_update_freq"))
            .targetTheta(cfg.getDouble("policy.learn.target_theta"))
            .huber("huber".equals(cfg.getString("policy.learn.loss")))
            .gradClip(cfg.getDouble("policy.learn.grad_clip"))
            .activation(Activation.parse("policy.model.activation", cfg.getString("policy.model.activation")))
            .build();
    }

    @Override
    public OffPolicyParts<DqnBatch> parts(final Config cfg, final long seed, final long rankSeed)
    {
        return new Parts(cfg, seed, rankSeed);
    }

    @Override
    public double[] evaluate(final Config cfg, final Map<String, Object> state, final int episodes, final long seed)
    {
        try (PointerScope scope = new PointerScope();
            DqnPolicy policy = Seeding.isolated(() -> withModel(cfg, state));
            Evaluator evaluator = new Evaluator(EnvTypes.envs(cfg, cfg.getInt("env.evaluator_env_num")), episodes,
                seed, false))
        {
            final Evaluator.Result result = evaluator.evaluate(policy.online());
            return new double[] {result.meanReturn(), result.minReturn(), result.maxReturn()};
        }
    }

    @Override
    public DqnPolicy withModel(final Config cfg, final Map<String, Object> state)
    {
        return OffPolicyAlgorithm.loaded(new DqnPolicy(policySettings(cfg)), policy -> {
            if (!(state.get("model") instanceof Map<?, ?> model))
            {
                throw new IllegalArgumentException("the checkpoint has no 'model' dict");
            }
            policy.parameters().loadStateDict(model, true);
        });
    }

    /**
     * One run's DQN half: the policy, the replay, the collector and the evaluator. Each rank explores on its own
     * ({@code rankSeed}); evaluation replays the same seeded starts everywhere.
     */
    static final class Parts implements OffPolicyParts<DqnBatch>
    {
        private final Config cfg;
        private final DqnPolicy policy;
        private final ReplayBuffer buffer;
        private final Collector collector;
        private final Evaluator evaluator;
        private final DqnBatch batch;
        private final boolean prioritized;

        Parts(final Config cfg, final long seed, final long rankSeed)
        {
            this.cfg = cfg;
            final List<AutoCloseable> made = new ArrayList<>();
            try
            {
                policy = new DqnPolicy(policySettings(cfg));
                made.add(policy);
                final int obsWidth = cfg.getInt("policy.model.obs_shape");
                prioritized = cfg.getBoolean("policy.other.replay_buffer.priority");
                buffer = new ReplayBuffer(cfg.getInt("policy.other.replay_buffer.replay_buffer_size"), obsWidth,
                    prioritized, cfg.getDouble("policy.other.replay_buffer.priority_alpha"),
                    cfg.getDouble("policy.other.replay_buffer.priority_beta"), RunStream.REPLAY.seed(rankSeed));
                final VectorEnv collectEnvs = EnvTypes.envs(cfg, cfg.getInt("env.collector_env_num"));
                made.add(collectEnvs);
                collectEnvs.reset(rankSeed);
                collector = new Collector(collectEnvs, buffer, cfg.getDouble("policy.other.eps.start"),
                    cfg.getDouble("policy.other.eps.end"), cfg.getDouble("policy.other.eps.decay"),
                    cfg.getInt("policy.nstep"), cfg.getDouble("policy.discount_factor"),
                    cfg.getBoolean("policy.collect.truncation_bootstraps"), RunStream.EXPLORATION.seed(rankSeed));
                // The collector closes its envs from now on.
                made.set(made.size() - 1, collector);
                // DI-engine seeds its evaluator envs apart from the collector's; these replay one set of starts.
                evaluator = new Evaluator(EnvTypes.envs(cfg, cfg.getInt("env.evaluator_env_num")),
                    cfg.getInt("env.n_evaluator_episode"), seed + 10_000, true);
                made.add(evaluator);
                batch = newBatch();
                made.add(batch);
                policy.allowFreshOptimizer(cfg.getBoolean("policy.learn.fresh_optimizer_on_resume"));
                policy.fusedUpdate(cfg.getBoolean("policy.learn.fused_update"));
                if (policy.fusedUpdate())
                {
                    // The greedy forwards of collection and evaluation take the native path too (each its own
                    // scratch).
                    fuseActors(policy.online(), policy.parameters());
                }
            }
            catch (final RuntimeException | Error ex)
            {
                Closing.afterFailure(made, ex);
                throw ex;
            }
            // From now on only close() below frees it: the run's threads use its memory until then.
            policy.ownership.take();
        }

        /** Runs the collector's and evaluator's greedy forwards of {@code net} through the fused native forward. */
        void fuseActors(final QNetwork net, final FlatParameters params)
        {
            final DqnPolicy.Settings settings = policy.settings();
            collector.fuse(net, params, settings.hidden(), settings.dueling());
            evaluator.fuse(net, params, settings.hidden(), settings.dueling());
        }

        @Override
        public Policy<DqnBatch> policy()
        {
            return policy;
        }

        ReplayBuffer buffer()
        {
            return buffer;
        }

        Collector collector()
        {
            return collector;
        }

        @Override
        public List<? extends FusedOptimizer<?>> optimizers()
        {
            return List.of(policy.optimizer());
        }

        /** The autograd path's online net goes to c10d's Reducer; the fused update overlaps on its own. */
        @Override
        public List<List<Module>> autogradModules()
        {
            return policy.fusedUpdate() ? List.of() : List.of(List.of(policy.online().module()));
        }

        @Override
        public List<FlatParameters> targets()
        {
            return List.of(policy.targetParameters());
        }

        @Override
        public DqnBatch batch()
        {
            return batch;
        }

        @Override
        public int batchSize()
        {
            return batch.size();
        }

        @Override
        public Replay<DqnBatch> replay()
        {
            return buffer;
        }

        @Override
        public void collect(final int transitions)
        {
            collector.collect(policy.online(), transitions);
        }

        @Override
        public long envSteps()
        {
            return collector.envsteps();
        }

        @Override
        public void resumeAt(final long envSteps)
        {
            collector.resumeAt(envSteps);
        }

        @Override
        public double evaluate()
        {
            return evaluator.evaluate(policy.online()).meanReturn();
        }

        @Override
        public void afterUpdate(final BaseLearner<DqnBatch> learner)
        {
            if (prioritized)
            {
                buffer.updatePriorities(learner.priorities());
            }
        }

        @Override
        public double epsilon()
        {
            return collector.epsilon();
        }

        @Override
        public Map<String, Object> randomState()
        {
            final Map<String, Object> state = new LinkedHashMap<>(collector.randomState());
            state.put("replay", buffer.randomState());
            return state;
        }

        @Override
        public void restoreRandomState(final Map<?, ?> state)
        {
            final long replay = StateFields.integer("random state", state, "replay");
            collector.restoreRandomState(state);
            buffer.restoreRandomState(replay);
        }

        @Override
        public void ownRandomStreams(final Map<?, ?> state, final ResumableRandom fresh)
        {
            final Map<String, Object> own = new LinkedHashMap<>();
            own.put("explore", fresh.nextLong());
            own.put("envs", LongStream.range(0, cfg.getInt("env.collector_env_num")).map(i -> fresh.nextLong())
                .boxed().toList());
            collector.restoreRandomState(own);
            buffer.restoreRandomState(fresh.nextLong());
        }

        @Override
        public DqnBatch newBatch()
        {
            return new DqnBatch(policy.settings().batchSize(), policy.settings().obs());
        }

        /** A second Q-network (with its own fused forward when the update is fused) refreshed from the online one. */
        @Override
        public ActingCopy actingCopy()
        {
            final DqnPolicy.Settings settings = policy.settings();
            final QNetwork net = new QNetwork(settings.obs(), settings.actions(), settings.hidden(), settings.dueling(),
                settings.activation());
            final FlatParameters params = FlatParameters.of(net.module());
            if (policy.fusedUpdate())
            {
                // The collector thread's own fused forward (the learner's handle is not shared).
                fuseActors(net, params);
            }
            return new ActingCopy(policy.parameters(), params, net)
            {
                @Override
                public void collect(final int transitions)
                {
                    collector.collect(net, transitions);
                }

                @Override
                public double evaluate()
                {
                    return evaluator.evaluate(net).meanReturn();
                }
            };
        }

        @Override
        public void close()
        {
            Closing.all(batch, collector, evaluator, policy.ownership.releasing(policy));
        }
    }
}
