package org.ding4j.rl.ppo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Module;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.env.Box;
import org.ding4j.env.Discrete;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.internal.Closing;
import org.ding4j.policy.Policy;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.rl.pipeline.ActingCopy;
import org.ding4j.rl.pipeline.EpisodeEvaluator;
import org.ding4j.rl.pipeline.OffPolicyAlgorithm;
import org.ding4j.rl.pipeline.OffPolicyParts;
import org.ding4j.rl.pipeline.Replay;
import org.ding4j.rl.pipeline.RunStream;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.Seeding;

/**
 * PPO ({@code policy.type: ppo}) on the same pipeline as DQN, TD3 and SAC, on any environment with a {@code Discrete}
 * (categorical head) or bounded {@code Box} action space (Gaussian head): each round collects a rollout of
 * {@code n_sample} transitions with the current policy, then one training call runs {@code epoch_per_collect} epochs
 * of {@code batch_size} minibatches on it, each minibatch an iteration (so {@code eval_freq}, {@code max_train_iter}
 * and the checkpoint schedule count minibatches, as DI-engine's learner does); evaluation is the deterministic action
 * on fresh seeded starts. On-policy: serial mode only (a collector thread would collect with stale weights). Its
 * defaults are {@code examples/cartpole_ppo.yaml}. The update is {@link org.ding4j.torch.FusedPpo}'s one native call
 * per rollout ({@code policy.learn.fused_update: true}) or libtorch autograd; on data-parallel ranks the gradients of
 * each minibatch are averaged before its step (the fused update's all-reduce between its two native calls, or c10d's
 * Reducer during autograd's backward).
 */
public final class PpoAlgorithm implements OffPolicyAlgorithm
{
    /** The embedded defaults on the class path. */
    public static final String DEFAULT_CONFIG = "org/ding4j/examples/cartpole_ppo.yaml";

    private static final long MAX_WIDTH = 1 << 16;
    /** The rows of one training call's minibatch order (n_sample x epochs), an int each. */
    private static final long MAX_ORDER = 1 << 26;
    /**
     * Minibatches of one training call: they run in one native call that no stop interrupts (SIGTERM waits for it),
     * so a call is bounded (about a second at the shipped configs' sizes, which run 16 and 640).
     */
    static final long MAX_MINIBATCHES = 10_000;

    @Override
    public String name()
    {
        return "ppo";
    }

    @Override
    public String defaults()
    {
        return DEFAULT_CONFIG;
    }

    @Override
    public void rules(final ConfigSchema.Builder schema)
    {
        final ValueRule unit = v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1 ? null
            : "expected a number in [0, 1]";
        final ValueRule nonNegative = v -> v instanceof Number n && n.doubleValue() >= 0
            && Double.isFinite(n.doubleValue()) ? null : "expected a finite number >= 0";
        schema.rule("policy.type", v -> "ppo".equals(v) ? null : "expected ppo")
            .rule("policy.model.hidden_size_list", PpoAlgorithm::positiveWidths)
            .rule("policy.learn.update_per_collect", v -> Long.valueOf(1).equals(v) ? null
                : "expected 1 (one training call per rollout: its epochs are policy.learn.epoch_per_collect)")
            .rule("policy.learn.epoch_per_collect", ValueRule.integerIn(1, 10_000))
            .rule("policy.learn.learning_rate", ValueRule.LEARNING_RATE)
            .rule("policy.learn.clip_ratio", v -> v instanceof Number n && n.doubleValue() > 0
                && n.doubleValue() <= 1 ? null : "expected a number in (0, 1]")
            .rule("policy.learn.value_weight", nonNegative)
            .rule("policy.learn.entropy_weight", nonNegative)
            .rule("policy.learn.grad_clip", nonNegative)
            .rule("policy.learn.update_threads", ValueRule.integerIn(1, 2))
            .rule("policy.learn.discount_factor", unit)
            .rule("policy.learn.gae_lambda", unit)
            .rule("pipeline.mode", v -> "serial".equals(v) ? null
                : "expected serial (PPO learns from the rollout it has just collected with the current weights)");
    }

    private static String positiveWidths(final Object v)
    {
        final String expected = "expected a non-empty list of integers in [1, " + MAX_WIDTH + "]";
        if (!(v instanceof List<?> list) || list.isEmpty())
        {
            return expected;
        }
        return list.stream().allMatch(w -> w instanceof Long l && l >= 1 && l <= MAX_WIDTH) ? null : expected;
    }

    /**
     * The env's spaces, and the rollout's shape: {@code n_sample} a multiple of the env count and of the minibatch,
     * the replay exactly one rollout.
     */
    @Override
    public void check(final Config cfg)
    {
        final EnvTypes.Spaces spaces = EnvTypes.spaces(cfg);
        EnvTypes.checkWidth(cfg, "policy.model.obs_shape", spaces.observation().flatSize(), "observation width");
        if (spaces.action() instanceof Discrete discrete)
        {
            EnvTypes.checkWidth(cfg, "policy.model.action_shape", discrete.n(), "actions");
        }
        else if (spaces.action() instanceof Box box && box.isBounded())
        {
            EnvTypes.checkWidth(cfg, "policy.model.action_shape", box.flatSize(), "action width");
        }
        else
        {
            throw new ConfigException("env.type", "expected an environment with a Discrete or a bounded Box action "
                + "space, got " + cfg.getString("env.type") + " with " + spaces.action());
        }
        final long rows = cfg.getLong("policy.collect.n_sample");
        final long envs = cfg.getLong("env.collector_env_num");
        if (0 != rows % envs)
        {
            throw new ConfigException("policy.collect.n_sample", "expected a multiple of env.collector_env_num "
                + envs + " (each env steps n_sample / envs times per rollout), got " + rows);
        }
        final long minibatch = cfg.getLong("policy.learn.batch_size");
        if (minibatch < 2 && cfg.getBoolean("policy.learn.adv_norm"))
        {
            throw new ConfigException("policy.learn.batch_size", "expected at least 2 with policy.learn.adv_norm "
                + "(advantages are normalised by the minibatch's standard deviation), got " + minibatch);
        }
        if (0 != rows % minibatch)
        {
            throw new ConfigException("policy.learn.batch_size", "expected a divisor of policy.collect.n_sample "
                + rows + " (every epoch is whole minibatches of the rollout), got " + minibatch);
        }
        final long epochs = cfg.getLong("policy.learn.epoch_per_collect");
        final String oneCall = " (a training call runs n_sample / batch_size x epoch_per_collect minibatches, at most "
            + MAX_MINIBATCHES + ", in one native call that a stop waits for)";
        if (rows / minibatch > MAX_MINIBATCHES)
        {
            // The smallest batch size that fits, and divides n_sample as every batch size must.
            long fits = (rows + MAX_MINIBATCHES - 1) / MAX_MINIBATCHES;
            while (0 != rows % fits)
            {
                fits++;
            }
            throw new ConfigException("policy.learn.batch_size", "expected at least " + fits + " (a divisor of "
                + "policy.collect.n_sample " + rows + ")" + oneCall + ", got " + minibatch);
        }
        if (rows / minibatch * epochs > MAX_MINIBATCHES)
        {
            throw new ConfigException("policy.learn.epoch_per_collect", "expected at most " + MAX_MINIBATCHES
                / (rows / minibatch) + " with policy.collect.n_sample " + rows + " and policy.learn.batch_size "
                + minibatch + oneCall + ", got " + epochs);
        }
        if (rows * epochs > MAX_ORDER)
        {
            throw new ConfigException("policy.learn.epoch_per_collect", "expected at most " + MAX_ORDER / rows
                + " with policy.collect.n_sample " + rows + " (a training call's minibatch order holds n_sample x "
                + "epochs rows, at most " + MAX_ORDER + "), got " + epochs);
        }
        if (cfg.getLong("policy.other.replay_buffer.replay_buffer_size") != rows)
        {
            throw new ConfigException("policy.other.replay_buffer.replay_buffer_size", "expected policy.collect."
                + "n_sample " + rows + " (PPO keeps one rollout), got "
                + cfg.getLong("policy.other.replay_buffer.replay_buffer_size"));
        }
    }

    /** Actor and critic: each Linear's weights and bias; the log standard deviations of a Gaussian head. */
    @Override
    public long parameterCount(final Config cfg)
    {
        final long obs = cfg.getLong("policy.model.obs_shape");
        final long actions = cfg.getLong("policy.model.action_shape");
        long actor = 0;
        long critic = 0;
        long in = obs;
        for (final Object width : cfg.getList("policy.model.hidden_size_list"))
        {
            final long out = ((Number)width).longValue();
            actor += (in + 1) * out;
            in = out;
        }
        critic += actor + in + 1;
        actor += (in + 1) * actions;
        final boolean gaussian = !(EnvTypes.spaces(cfg).action() instanceof Discrete);
        return actor + critic + (gaussian ? actions : 0);
    }

    /**
     * A rollout row as the rollout and the batch both hold it: the observation and the action twice, six floats and
     * two flags in the rollout, four more floats in the batch.
     */
    @Override
    public long bytesPerTransition(final Config cfg)
    {
        return Float.BYTES * (2 * cfg.getLong("policy.model.obs_shape") + 2 * cfg.getLong("policy.model.action_shape")
            + 10) + 2;
    }

    static PpoPolicy.Settings settings(final Config cfg)
    {
        final List<Object> widths = cfg.getList("policy.model.hidden_size_list");
        final long[] hidden = new long[widths.size()];
        for (int i = 0; i < hidden.length; i++)
        {
            hidden[i] = ((Number)widths.get(i)).longValue();
        }
        final boolean discrete = EnvTypes.spaces(cfg).action() instanceof Discrete;
        return new PpoPolicy.Settings(cfg.getInt("policy.model.obs_shape"), cfg.getInt("policy.model.action_shape"),
            discrete, hidden, cfg.getInt("policy.learn.batch_size"), cfg.getInt("policy.learn.epoch_per_collect"),
            cfg.getDouble("policy.learn.learning_rate"), cfg.getDouble("policy.learn.clip_ratio"),
            cfg.getBoolean("policy.learn.value_clip"), cfg.getDouble("policy.learn.value_weight"),
            cfg.getDouble("policy.learn.entropy_weight"), cfg.getBoolean("policy.learn.adv_norm"),
            cfg.getDouble("policy.learn.grad_clip"), cfg.getBoolean("policy.learn.fused_update"));
    }

    @Override
    public OffPolicyParts<PpoBatch> parts(final Config cfg, final long seed, final long rankSeed)
    {
        return new Parts(cfg, seed, rankSeed);
    }

    @Override
    public double[] evaluate(final Config cfg, final Map<String, Object> state, final int episodes, final long seed)
    {
        try (PpoPolicy policy = Seeding.isolated(() -> withModel(cfg, state));
            EpisodeEvaluator evaluator = new EpisodeEvaluator(EnvTypes.envs(cfg, episodes), seed))
        {
            final double mean = evaluator.evaluate(policy.acting());
            final double[] returns = evaluator.returns();
            return new double[] {mean, java.util.Arrays.stream(returns).min().orElseThrow(),
                java.util.Arrays.stream(returns).max().orElseThrow()};
        }
    }

    @Override
    public PpoPolicy withModel(final Config cfg, final Map<String, Object> state)
    {
        // The nets alone (no shuffling: evaluation and serving take the mode): a model-only file, or one saved from
        // Python, evaluates and serves too.
        return OffPolicyAlgorithm.loaded(new PpoPolicy(settings(cfg), 0), policy -> policy.loadModel(state));
    }

    /** One run's PPO half: the policy, the rollout (its envs and exploration) and the evaluator. */
    private static final class Parts implements OffPolicyParts<PpoBatch>
    {
        private final PpoPolicy policy;
        private final PpoPolicy.Acting collecting;
        private final PpoPolicy.Acting evaluating;
        private final Rollout rollout;
        private final EpisodeEvaluator evaluator;
        private final PpoBatch batch;
        private final int rows;

        Parts(final Config cfg, final long seed, final long rankSeed)
        {
            rows = cfg.getInt("policy.collect.n_sample");
            final List<AutoCloseable> made = new ArrayList<>();
            try
            {
                policy = new PpoPolicy(settings(cfg), RunStream.POLICY.seed(rankSeed));
                made.add(policy);
                policy.updateThreads(cfg.getInt("policy.learn.update_threads"));
                final VectorEnv envs = EnvTypes.envs(cfg, cfg.getInt("env.collector_env_num"));
                made.add(envs);
                envs.reset(rankSeed);
                rollout = new Rollout(envs, cfg.getInt("policy.collect.n_sample"),
                    cfg.getDouble("policy.learn.discount_factor"), cfg.getDouble("policy.learn.gae_lambda"),
                    RunStream.EXPLORATION.seed(rankSeed));
                made.set(made.size() - 1, rollout);
                evaluator = new EpisodeEvaluator(EnvTypes.envs(cfg, cfg.getInt("env.n_evaluator_episode")),
                    seed + 10_000);
                made.add(evaluator);
                batch = newBatch();
                collecting = policy.acting();
                evaluating = policy.acting();
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
        public Policy<PpoBatch> policy()
        {
            return policy;
        }

        @Override
        public List<? extends FusedOptimizer<?>> optimizers()
        {
            return List.of(policy.optimizer());
        }

        @Override
        public List<List<Module>> autogradModules()
        {
            return policy.settings().fused() ? List.of() : List.of(policy.modules());
        }

        @Override
        public List<FlatParameters> targets()
        {
            return List.of();
        }

        @Override
        public PpoBatch batch()
        {
            return batch;
        }

        /** The whole rollout: one training call takes it. */
        @Override
        public int batchSize()
        {
            return batch.rows();
        }

        @Override
        public Replay<PpoBatch> replay()
        {
            return rollout;
        }

        @Override
        public void collect(final int transitions)
        {
            rollout.collect(collecting);
        }

        @Override
        public long envSteps()
        {
            return rollout.envsteps();
        }

        @Override
        public void resumeAt(final long envSteps)
        {
            rollout.resumeAt(envSteps);
        }

        @Override
        public double evaluate()
        {
            return evaluator.evaluate(evaluating);
        }

        @Override
        public Map<String, Object> randomState()
        {
            final Map<String, Object> state = new LinkedHashMap<>(rollout.randomState());
            state.put("eval", evaluator.randomState());
            return state;
        }

        @Override
        public void restoreRandomState(final Map<?, ?> state)
        {
            rollout.restoreRandomState(state);
            evaluator.restoreRandomState(state);
        }

        /** Exploration and env starts of this rank's own; the evaluator's starts are every rank's. */
        @Override
        public void ownRandomStreams(final Map<?, ?> state, final ResumableRandom fresh)
        {
            evaluator.restoreRandomState(state);
            final Map<String, Object> own = rollout.randomState();
            own.put("explore", fresh.nextLong());
            rollout.restoreRandomState(own);
        }

        /** Never asked: PPO runs serial only (a rule refuses parallel mode). */
        @Override
        public ActingCopy actingCopy()
        {
            throw new IllegalStateException("ppo: pipeline.mode parallel is refused by the config's rules");
        }

        @Override
        public PpoBatch newBatch()
        {
            final PpoPolicy.Settings s = policy.settings();
            return new PpoBatch(rows, s.obs(), s.actionWidth());
        }

        @Override
        public void close()
        {
            Closing.all(rollout, evaluator, batch, policy.ownership.releasing(policy));
        }
    }
}
