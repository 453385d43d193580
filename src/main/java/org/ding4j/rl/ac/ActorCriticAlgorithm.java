package org.ding4j.rl.ac;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.env.Box;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.internal.Closing;
import org.ding4j.policy.Policy;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.rl.pipeline.ActingCopy;
import org.ding4j.rl.pipeline.Actor;
import org.ding4j.rl.pipeline.EpisodeEvaluator;
import org.ding4j.rl.pipeline.OffPolicyAlgorithm;
import org.ding4j.rl.pipeline.OffPolicyParts;
import org.ding4j.rl.pipeline.Replay;
import org.ding4j.rl.pipeline.RunStream;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.Seeding;

/**
 * TD3 ({@code policy.type: td3}) and SAC ({@code sac}) as the one off-policy pipeline takes them, on any environment
 * with a bounded {@link Box} action space (the actor acts in [-1, 1], scaled onto the bounds): uniform random
 * transitions first ({@code random_collect_size}), then rounds of collect {@code n_sample} steps /
 * {@code update_per_collect} updates on uniform replay samples; evaluation is the deterministic action on fresh
 * seeded starts. Their defaults are {@code examples/pendulum_td3.yaml} and {@code examples/pendulum_sac.yaml}; in
 * parallel mode the collector thread acts with a copy of the actor refreshed from the learner's.
 */
public final class ActorCriticAlgorithm implements OffPolicyAlgorithm
{
    /** The embedded TD3 defaults. */
    public static final String TD3_CONFIG = "org/ding4j/examples/pendulum_td3.yaml";
    /** The embedded SAC defaults. */
    public static final String SAC_CONFIG = "org/ding4j/examples/pendulum_sac.yaml";

    private final String name;

    /**
     * @param name td3 or sac
     * @throws IllegalArgumentException for another name
     */
    public ActorCriticAlgorithm(final String name)
    {
        if (!"td3".equals(name) && !"sac".equals(name))
        {
            throw new IllegalArgumentException("ActorCriticAlgorithm: expected td3 or sac, got " + name);
        }
        this.name = name;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public String defaults()
    {
        return "td3".equals(name) ? TD3_CONFIG : SAC_CONFIG;
    }

    @Override
    public void rules(final ConfigSchema.Builder schema)
    {
        schema.rule("policy.type", v -> name.equals(v) ? null : "expected " + name)
            .rule("policy.model.twin_critic", v -> Boolean.TRUE.equals(v) ? null
                : "expected true (ding4j's TD3 and SAC always learn twin critics)")
            .rule("policy.model.actor_head_hidden_size", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.critic_head_hidden_size", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.actor_head_layer_num", ValueRule.integerIn(0, 64))
            .rule("policy.model.critic_head_layer_num", ValueRule.integerIn(0, 64))
            .rule("policy.random_collect_size", ValueRule.integerIn(0, Integer.MAX_VALUE))
            .rule("policy.learn.discount_factor", ActorCriticAlgorithm::unitInterval)
            .rule("policy.learn.target_theta", ActorCriticAlgorithm::unitInterval)
            .rule("policy.learn.update_threads", ValueRule.integerIn(1, 2));
        if ("td3".equals(name))
        {
            schema.rule("policy.learn.learning_rate_actor", ValueRule.LEARNING_RATE)
                .rule("policy.learn.learning_rate_critic", ValueRule.LEARNING_RATE)
                .rule("policy.learn.actor_update_freq", ValueRule.integerIn(1, Integer.MAX_VALUE))
                .rule("policy.learn.noise_sigma", ActorCriticAlgorithm::nonNegative)
                .rule("policy.learn.noise_range.max", ActorCriticAlgorithm::nonNegative)
                .rule("policy.learn.noise_range.min", v -> v instanceof Number n && n.doubleValue() <= 0 ? null
                    : "expected a number <= 0 (the smoothing noise's lower clip)")
                .rule("policy.collect.noise_sigma", ActorCriticAlgorithm::nonNegative);
        }
        else
        {
            schema.rule("policy.learn.learning_rate_q", ValueRule.LEARNING_RATE)
                .rule("policy.learn.learning_rate_policy", ValueRule.LEARNING_RATE)
                .rule("policy.learn.learning_rate_alpha", ValueRule.LEARNING_RATE)
                // The entropy term's weight against rewards of order 1-10: 1e300 makes every target non-finite.
                .rule("policy.learn.alpha", v -> v instanceof Number n && n.doubleValue() > 0
                    && n.doubleValue() <= 100 ? null : "expected a temperature in (0, 100]");
        }
    }

    private static String unitInterval(final Object v)
    {
        return v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1 ? null
            : "expected a number in [0, 1]";
    }

    private static String nonNegative(final Object v)
    {
        return v instanceof Number n && n.doubleValue() >= 0 && Double.isFinite(n.doubleValue()) ? null
            : "expected a finite number >= 0";
    }

    /** The env's spaces (a bounded {@link Box} of {@code action_shape} entries, the obs width), TD3's noise clip. */
    @Override
    public void check(final Config cfg)
    {
        final EnvTypes.Spaces spaces = EnvTypes.spaces(cfg);
        if (!(spaces.action() instanceof Box box) || !box.isBounded())
        {
            throw new ConfigException("env.type", "expected an environment with a bounded Box action space (TD3 and "
                + "SAC act in [-1, 1], scaled onto its bounds), got " + cfg.getString("env.type") + " with "
                + spaces.action());
        }
        EnvTypes.checkWidth(cfg, "policy.model.obs_shape", spaces.observation().flatSize(), "observation width");
        EnvTypes.checkWidth(cfg, "policy.model.action_shape", box.flatSize(), "action width");
        if ("td3".equals(name))
        {
            final double noiseMax = cfg.getDouble("policy.learn.noise_range.max");
            if (-cfg.getDouble("policy.learn.noise_range.min") != noiseMax)
            {
                throw new ConfigException("policy.learn.noise_range.min", "expected -noise_range.max (" + -noiseMax
                    + ": the smoothing noise is clipped symmetrically), got "
                    + cfg.get("policy.learn.noise_range.min"));
            }
        }
    }

    /** The actor and the twin critic, each Linear's weights and bias. */
    @Override
    public long parameterCount(final Config cfg)
    {
        final long obs = cfg.getLong("policy.model.obs_shape");
        final long act = cfg.getLong("policy.model.action_shape");
        return mlpParameters(obs, cfg.getLong("policy.model.actor_head_hidden_size"),
            cfg.getLong("policy.model.actor_head_layer_num"), ("sac".equals(name) ? 2 : 1) * act)
            + 2 * mlpParameters(obs + act, cfg.getLong("policy.model.critic_head_hidden_size"),
            cfg.getLong("policy.model.critic_head_layer_num"), 1);
    }

    private static long mlpParameters(final long in, final long width, final long extraLayers, final long out)
    {
        return (in + 1) * width + extraLayers * (width + 1) * width + (width + 1) * out;
    }

    @Override
    public long bytesPerTransition(final Config cfg)
    {
        return TransitionBuffer.bytesPerTransition(cfg.getInt("policy.model.obs_shape"),
            cfg.getInt("policy.model.action_shape"));
    }

    /**
     * Builds the policy the config describes, its nets drawn from libtorch's global generator (seed it first).
     *
     * @param cfg       an effective TD3 or SAC config
     * @param noiseSeed the seed of the update's noise stream
     * @return a new TD3 or SAC policy
     */
    public static ActorCritic newPolicy(final Config cfg, final long noiseSeed)
    {
        final String prefix = "policy.learn.";
        if ("td3".equals(cfg.getString("policy.type")))
        {
            final ActorCritic.Nets nets = nets(cfg, cfg.getDouble(prefix + "learning_rate_actor"),
                cfg.getDouble(prefix + "learning_rate_critic"));
            return new Td3Policy(new Td3Policy.Settings(nets, cfg.getInt(prefix + "actor_update_freq"),
                cfg.getBoolean(prefix + "noise") ? cfg.getDouble(prefix + "noise_sigma") : 0.0,
                cfg.getDouble(prefix + "noise_range.max"), cfg.getDouble("policy.collect.noise_sigma")), noiseSeed);
        }
        final ActorCritic.Nets nets = nets(cfg, cfg.getDouble(prefix + "learning_rate_policy"),
            cfg.getDouble(prefix + "learning_rate_q"));
        return new SacPolicy(new SacPolicy.Settings(nets, cfg.getBoolean(prefix + "auto_alpha"),
            cfg.getDouble(prefix + "alpha"), cfg.getDouble(prefix + "learning_rate_alpha")), noiseSeed);
    }

    private static ActorCritic.Nets nets(final Config cfg, final double lrActor, final double lrCritic)
    {
        return new ActorCritic.Nets(cfg.getInt("policy.model.obs_shape"), cfg.getInt("policy.model.action_shape"),
            hidden(cfg.getLong("policy.model.actor_head_hidden_size"), cfg.getInt("policy.model.actor_head_layer_num")),
            hidden(cfg.getLong("policy.model.critic_head_hidden_size"),
                cfg.getInt("policy.model.critic_head_layer_num")),
            cfg.getInt("policy.learn.batch_size"), cfg.getDouble("policy.learn.discount_factor"),
            cfg.getDouble("policy.learn.target_theta"), lrActor, lrCritic);
    }

    /** DI-engine's head: one Linear into the hidden width, then {@code layers} more at that width. */
    private static long[] hidden(final long width, final int layers)
    {
        final long[] hidden = new long[1 + layers];
        Arrays.fill(hidden, width);
        return hidden;
    }

    @Override
    public OffPolicyParts<ControlBatch> parts(final Config cfg, final long seed, final long rankSeed)
    {
        return new Parts(cfg, seed, rankSeed);
    }

    @Override
    public double[] evaluate(final Config cfg, final Map<String, Object> state, final int episodes, final long seed)
    {
        try (ActorCritic policy = Seeding.isolated(() -> withModel(cfg, state)))
        {
            final double mean;
            final double[] returns;
            try (EpisodeEvaluator evaluator = new EpisodeEvaluator(EnvTypes.envs(cfg, episodes), seed))
            {
                mean = evaluator.evaluate(policy);
                returns = evaluator.returns();
            }
            return new double[] {mean, Arrays.stream(returns).min().orElseThrow(),
                Arrays.stream(returns).max().orElseThrow()};
        }
    }

    @Override
    public ActorCritic withModel(final Config cfg, final Map<String, Object> state)
    {
        // The actor alone (its noise unused: evaluation and serving act deterministically): a model-only file, or one
        // saved from Python, evaluates and serves too.
        return OffPolicyAlgorithm.loaded(newPolicy(cfg, 0), policy -> policy.loadActor(state));
    }

    /**
     * One run's TD3 or SAC half: the policy (its update's noise from this rank's seed), the replay, the collector
     * and the evaluator (fresh seeded starts each evaluation, the same on every rank).
     */
    private static final class Parts implements OffPolicyParts<ControlBatch>
    {
        private final ActorCritic policy;
        private final ControlBatch batch;
        private final TransitionBuffer buffer;
        private final ContinuousCollector collector;
        private final EpisodeEvaluator evaluator;

        Parts(final Config cfg, final long seed, final long rankSeed)
        {
            final List<AutoCloseable> made = new ArrayList<>();
            try
            {
                policy = newPolicy(cfg, RunStream.POLICY.seed(rankSeed));
                made.add(policy);
                batch = newBatch();
                made.add(batch);
                policy.allowFreshOptimizer(cfg.getBoolean("policy.learn.fresh_optimizer_on_resume"));
                policy.updateThreads(cfg.getInt("policy.learn.update_threads"));
                policy.fusedUpdate(cfg.getBoolean("policy.learn.fused_update"));
                buffer = new TransitionBuffer(cfg.getInt("policy.other.replay_buffer.replay_buffer_size"),
                    policy.obsWidth(), policy.actionWidth(), RunStream.REPLAY.seed(rankSeed));
                final VectorEnv collectEnvs = EnvTypes.envs(cfg, cfg.getInt("env.collector_env_num"));
                made.add(collectEnvs);
                collectEnvs.reset(rankSeed);
                collector = new ContinuousCollector(collectEnvs, buffer, cfg.getLong("policy.random_collect_size"),
                    RunStream.EXPLORATION.seed(rankSeed));
                // The collector closes its envs from now on.
                made.set(made.size() - 1, collector);
                evaluator = new EpisodeEvaluator(EnvTypes.envs(cfg, cfg.getInt("env.n_evaluator_episode")),
                    seed + 10_000);
            }
            catch (final RuntimeException | Error ex)
            {
                Closing.afterFailure(made, ex);
                throw ex;
            }
            // From now on only close() below frees it: the run's threads use its memory until then.
            policy.ownership.take();
        }

        @Override
        public Policy<ControlBatch> policy()
        {
            return policy;
        }

        @Override
        public List<? extends FusedOptimizer<?>> optimizers()
        {
            return policy.optimizers();
        }

        @Override
        public List<FlatParameters> targets()
        {
            return policy.targetParameters();
        }

        @Override
        public ControlBatch batch()
        {
            return batch;
        }

        @Override
        public int batchSize()
        {
            return batch.size();
        }

        @Override
        public Replay<ControlBatch> replay()
        {
            return buffer;
        }

        @Override
        public void collect(final int transitions)
        {
            collector.collect(policy, transitions);
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
            return evaluator.evaluate(policy);
        }

        @Override
        public ControlBatch newBatch()
        {
            return new ControlBatch(policy.batchSize(), policy.obsWidth(), policy.actionWidth());
        }

        /** A second actor net refreshed from the policy's, acting through the policy's action mapping. */
        @Override
        public ActingCopy actingCopy()
        {
            final Mlp net = Mlp.of(Activation.RELU, policy.actorSizes());
            final FlatParameters params = FlatParameters.of(net.module());
            final Actor actor = policy.actingOn(params);
            return new ActingCopy(policy.actorParameters(), params, net)
            {
                @Override
                public void collect(final int transitions)
                {
                    collector.collect(actor, transitions);
                }

                @Override
                public double evaluate()
                {
                    return evaluator.evaluate(actor);
                }
            };
        }

        /** The collector's exploration, replay and env-start streams and the evaluator's start streams. */
        @Override
        public Map<String, Object> randomState()
        {
            final Map<String, Object> state = collector.randomState();
            state.put("eval", evaluator.randomState());
            return state;
        }

        @Override
        public void restoreRandomState(final Map<?, ?> state)
        {
            collector.restoreRandomState(state);
            evaluator.restoreRandomState(state);
        }

        /** Exploration, replay and the update's noise of this rank's own; the evaluator's starts are every rank's. */
        @Override
        public void ownRandomStreams(final Map<?, ?> state, final ResumableRandom fresh)
        {
            evaluator.restoreRandomState(state);
            final Map<String, Object> own = new LinkedHashMap<>();
            own.put("explore", fresh.nextLong());
            own.put("replay", fresh.nextLong());
            policy.restartNoise(fresh.nextLong());
            own.put("envs", java.util.stream.LongStream.range(0, collector.envCount()).map(i -> fresh.nextLong())
                .boxed().toList());
            collector.restoreRandomState(own);
        }

        @Override
        public void close()
        {
            Closing.all(collector, evaluator, batch, policy.ownership.releasing(policy));
        }
    }
}
