package org.ding4j.example.ac;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigFiles;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.dist.GradientSync;
import org.ding4j.env.Box;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.example.envs.EnvTypes;
import org.ding4j.example.pipeline.EvalSchedule;
import org.ding4j.example.pipeline.OffPolicyRounds;
import org.ding4j.example.pipeline.Restarts;
import org.ding4j.example.pipeline.SerialLoop;
import org.ding4j.example.pipeline.SummaryFile;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.LearnerCheckpoints;
import org.ding4j.learner.RunOutcome;
import org.ding4j.torch.FlatParameters;

/**
 * DI-engine's serial pipeline for TD3 and SAC through {@link BaseLearner}, on any environment with a bounded
 * {@link Box} action space ({@code env.type}: {@code pendulum}, Pendulum-v1, by default): random transitions first
 * ({@code random_collect_size}), then rounds of evaluate (every {@code eval_freq} updates) / collect
 * {@code n_sample} steps / {@code update_per_collect} updates on uniform replay samples, until the evaluation
 * return reaches {@code stop_value} or a limit is hit. {@code policy.type} ({@code td3} or {@code sac}) picks the
 * embedded defaults ({@code examples/pendulum_td3.yaml}, {@code examples/pendulum_sac.yaml}); every key is checked
 * before anything starts. Writes {@code ckpt_best.pth.tar} at each new best evaluation and {@code summary.json}.
 */
public final class ActorCriticPipeline
{
    /** The embedded TD3 defaults. */
    public static final String TD3_CONFIG = "org/ding4j/examples/pendulum_td3.yaml";
    /** The embedded SAC defaults. */
    public static final String SAC_CONFIG = "org/ding4j/examples/pendulum_sac.yaml";
    /** The checkpoint of the best evaluation so far, in the learner's checkpoint folder. */
    public static final String BEST_CHECKPOINT = "ckpt_best.pth.tar";

    private static final ConfigSchema TD3 = common(TD3_CONFIG)
        .rule("policy.learn.learning_rate_actor", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.learning_rate_critic", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.actor_update_freq", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("policy.learn.noise_sigma", ActorCriticPipeline::nonNegative)
        .rule("policy.learn.noise_range.max", ActorCriticPipeline::nonNegative)
        .rule("policy.learn.noise_range.min", v -> v instanceof Number n && n.doubleValue() <= 0 ? null
            : "expected a number <= 0 (the smoothing noise's lower clip)")
        .rule("policy.collect.noise_sigma", ActorCriticPipeline::nonNegative)
        .build();
    private static final ConfigSchema SAC = common(SAC_CONFIG)
        .rule("policy.learn.learning_rate_q", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.learning_rate_policy", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.learning_rate_alpha", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.alpha", ValueRule.POSITIVE_NUMBER)
        .build();

    private static ConfigSchema.Builder common(final String defaults)
    {
        return ConfigSchema.builder("", ConfigFiles.loadResource(defaults))
            .rule("exp_name", ValueRule.FOLDER_PATH)
            .rule("env.collector_env_num", ValueRule.integerIn(1, 4096))
            // Unused by this pipeline (n_evaluator_episode envs evaluate), but checked as DQN's is: a bad value in a
            // config is an error wherever it sits.
            .rule("env.evaluator_env_num", ValueRule.integerIn(1, 4096))
            .rule("env.n_evaluator_episode", ValueRule.integerIn(1, 1_000_000))
            .rule("env.max_episode_steps", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("env.type", EnvTypes::check)
            .rule("env.stop_value", ValueRule.FINITE_NUMBER)
            .rule("policy.model.obs_shape", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.action_shape", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.twin_critic", v -> Boolean.TRUE.equals(v) ? null
                : "expected true (ding4j's TD3 and SAC always learn twin critics)")
            .rule("policy.model.actor_head_hidden_size", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.critic_head_hidden_size", ValueRule.integerIn(1, 1 << 16))
            .rule("policy.model.actor_head_layer_num", ValueRule.integerIn(0, 64))
            .rule("policy.model.critic_head_layer_num", ValueRule.integerIn(0, 64))
            .rule("policy.random_collect_size", ValueRule.integerIn(0, Integer.MAX_VALUE))
            .rule("policy.learn.update_per_collect", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("policy.learn.batch_size", ValueRule.integerIn(1, 1 << 20))
            .rule("policy.learn.discount_factor", ActorCriticPipeline::unitInterval)
            .rule("policy.learn.target_theta", ActorCriticPipeline::unitInterval)
            .rule("policy.collect.n_sample", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("policy.eval.evaluator.eval_freq", ValueRule.POSITIVE_INTEGER)
            .rule("policy.other.replay_buffer.replay_buffer_size", ValueRule.integerIn(1, 1 << 26))
            .rule("pipeline.max_env_step", ValueRule.POSITIVE_INTEGER)
            .rule("pipeline.max_train_iter", ValueRule.POSITIVE_INTEGER)
            .rule("pipeline.dist_timeout_s", ValueRule.POSITIVE_NUMBER)
            .rule("dist.bucket_mb", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1024
                ? null : "expected a number of MiB in [0, 1024] (0: one all-reduce per optimizer)")
            .open("learner");
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

    /**
     * A line per evaluation.
     *
     * @param envSteps       env steps so far
     * @param trainIter      updates so far
     * @param evalReturn     this evaluation's mean return
     * @param bestEvalReturn the best so far
     * @param updatesPerS    updates per second of training wall time
     */
    public record Progress(long envSteps, long trainIter, double evalReturn, double bestEvalReturn,
        double updatesPerS)
    {
    }

    /**
     * How a run ended.
     *
     * @param algorithm      td3 or sac
     * @param seed           the run's seed
     * @param solved         whether an evaluation reached the stop value
     * @param stopValue      the stop value
     * @param bestEvalReturn the best evaluation return
     * @param envSteps       env steps collected
     * @param trainIter      updates done
     * @param wallS          training wall time (from the learner's start to the end)
     * @param updatesPerS    updates per second of it
     * @param interrupted    whether SIGINT/SIGTERM stopped it
     * @param paths          the files it wrote
     */
    public record Summary(String algorithm, long seed, boolean solved, double stopValue, double bestEvalReturn,
        long envSteps, long trainIter, double wallS, double updatesPerS, boolean interrupted, Map<String, Object> paths)
    {
    }

    private final Config cfg;
    private final String algorithm;
    private final DistInfo dist;
    private final ElasticAttempt attempt;
    /** Whether the user named a checkpoint to resume from (then a restart resumes from it, not the newest). */
    private final boolean explicitLoadPath;

    /**
     * Checks a user config over the defaults that its {@code policy.type} names.
     *
     * @param user the user's keys ({@code policy.type} td3 or sac)
     * @throws ConfigException naming the first bad key
     */
    public ActorCriticPipeline(final Config user)
    {
        this(user, DistInfo.single(), ElasticAttempt.first());
    }

    /**
     * A run in an attempt of a job that a launcher restarts ({@code ding4j launch --max-restarts N}): a restarted
     * attempt without an explicit {@code learner.hook.load_ckpt_before_run} resumes from the newest checkpoint of
     * {@code ./{exp_name}/ckpt} that reads back whole, and {@code summary.json} records the attempts under
     * {@code elastic} ({@link Restarts}).
     *
     * <p>
     * On one rank of a data-parallel job ({@code dist} from {@code ding4j launch}'s environment), as DQN's: each rank
     * collects with its own env, replay and noise seeds ({@code seed + 100000 rank}), every optimizer's gradients are
     * averaged across the ranks before its Adam step (the fused update in three native calls, reduced between them),
     * so the nets stay bit-identical and every rank's evaluation (the same seeded starts) gives the same return;
     * rank 0 alone writes the config, the checkpoints and {@code summary.json}.
     *
     * @param user    the user's keys ({@code policy.type} td3 or sac)
     * @param dist    this rank's place ({@link DistInfo#single()} for one process)
     * @param attempt which attempt this is ({@link ElasticAttempt#fromEnvironment})
     * @throws ConfigException naming the first bad key
     */
    public ActorCriticPipeline(final Config user, final DistInfo dist, final ElasticAttempt attempt)
    {
        Objects.requireNonNull(user, "user");
        this.dist = Objects.requireNonNull(dist, "dist");
        this.attempt = Objects.requireNonNull(attempt, "attempt");
        this.algorithm = algorithmOf(user);
        if (null == algorithm)
        {
            throw new ConfigException("policy.type", "expected td3 or sac, got " + user.get("policy.type"));
        }
        this.cfg = ("td3".equals(algorithm) ? TD3 : SAC).apply(user);
        this.explicitLoadPath = !BaseLearner.checkConfig(cfg.child("learner")).getString("hook.load_ckpt_before_run")
            .isEmpty();
        checkSpaces(cfg);
        if (cfg.getInt("policy.learn.batch_size") > cfg.getInt("policy.other.replay_buffer.replay_buffer_size"))
        {
            throw new ConfigException("policy.learn.batch_size", "expected at most replay_buffer_size ("
                + cfg.getInt("policy.other.replay_buffer.replay_buffer_size") + "), got "
                + cfg.getInt("policy.learn.batch_size"));
        }
    }

    /** The env's spaces against the config: a bounded {@link Box} of {@code action_shape} entries, the obs width. */
    private static void checkSpaces(final Config cfg)
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
    }

    /**
     * @param user a user config
     * @return td3 or sac when its {@code policy.type} names one (this pipeline's job), else null
     */
    public static String algorithmOf(final Config user)
    {
        final Object type = user.has("policy") && user.child("policy").has("type") ? user.get("policy.type") : null;
        return "td3".equals(type) || "sac".equals(type) ? (String)type : null;
    }

    /** @return the effective config */
    public Config config()
    {
        return cfg;
    }

    /**
     * Builds the policy the config describes, its nets drawn from libtorch's global generator (seed it first).
     *
     * @return a new TD3 or SAC policy
     */
    public ActorCritic newPolicy()
    {
        // The update's noise differs by rank, as the batches do (rank 0's is the single-process run's).
        final long seed = rankSeed();
        final String prefix = "policy.learn.";
        if ("td3".equals(algorithm))
        {
            final ActorCritic.Nets nets = nets(cfg.getDouble(prefix + "learning_rate_actor"),
                cfg.getDouble(prefix + "learning_rate_critic"));
            final double noiseMax = cfg.getDouble(prefix + "noise_range.max");
            if (-cfg.getDouble(prefix + "noise_range.min") != noiseMax)
            {
                throw new ConfigException(prefix + "noise_range.min", "expected -noise_range.max (" + -noiseMax
                    + ": the smoothing noise is clipped symmetrically), got " + cfg.get(prefix + "noise_range.min"));
            }
            return new Td3Policy(new Td3Policy.Settings(nets, cfg.getInt(prefix + "actor_update_freq"),
                cfg.getBoolean(prefix + "noise") ? cfg.getDouble(prefix + "noise_sigma") : 0.0, noiseMax,
                cfg.getDouble("policy.collect.noise_sigma")), seed + 7);
        }
        final ActorCritic.Nets nets = nets(cfg.getDouble(prefix + "learning_rate_policy"),
            cfg.getDouble(prefix + "learning_rate_q"));
        return new SacPolicy(new SacPolicy.Settings(nets, cfg.getBoolean(prefix + "auto_alpha"),
            cfg.getDouble(prefix + "alpha"), cfg.getDouble(prefix + "learning_rate_alpha")), seed + 7);
    }

    /** @return this rank's seed for its envs, replay and noise: the config's on rank 0 */
    private long rankSeed()
    {
        return cfg.getLong("seed") + 100_000L * dist.rank();
    }

    private ActorCritic.Nets nets(final double lrActor, final double lrCritic)
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
        java.util.Arrays.fill(hidden, width);
        return hidden;
    }

    /**
     * Evaluates a checkpoint's policy ({@code ding4j eval}): the deterministic action on fresh random starts.
     *
     * @param state    a checkpoint of this config's policy (its nets; the optimizers may be missing)
     * @param episodes episodes, run side by side
     * @param seed     the start states' seed
     * @return {@code {mean, min, max}} return
     * @throws IllegalArgumentException if the checkpoint does not match the config's nets (named tensor)
     */
    public double[] evaluate(final Map<String, Object> state, final int episodes, final long seed)
    {
        torch.manual_seed(seed);
        try (ActorCritic policy = newPolicy())
        {
            policy.allowFreshOptimizer(true);
            policy.loadStateDict(state);
            final double mean;
            final double[] returns;
            try (ContinuousEvaluator evaluator = new ContinuousEvaluator(EnvTypes.envs(cfg, episodes), seed))
            {
                mean = evaluator.evaluate(policy);
                returns = evaluator.returns();
            }
            return new double[] {mean, java.util.Arrays.stream(returns).min().orElseThrow(),
                java.util.Arrays.stream(returns).max().orElseThrow()};
        }
    }

    /**
     * Runs the job in {@code exp_name}.
     *
     * @param progress told after each evaluation
     * @return how it ended
     * @throws IOException if the experiment folder or summary cannot be written
     */
    public Summary run(final Consumer<Progress> progress) throws IOException
    {
        Objects.requireNonNull(progress, "progress");
        final long seed = rankSeed();
        final String exp = cfg.getString("exp_name");
        Files.createDirectories(Path.of(exp));
        if (0 == dist.rank())
        {
            ConfigFiles.writeYaml(cfg, Path.of(exp, "total_config.yaml"));
        }
        // The nets are drawn from the config's seed on every rank (rank 0's are broadcast anyway).
        torch.manual_seed(cfg.getLong("seed"));
        final LearnerCheckpoints.Verified resume = Restarts.resumePoint(attempt, explicitLoadPath, exp);
        final Config runCfg = null == resume ? cfg
            : cfg.with("learner.hook.load_ckpt_before_run", resume.file().toString());
        final Config learnerCfg = runCfg.child("learner");
        try (ActorCritic policy = newPolicy();
            BaseLearner<ControlBatch> learner = new BaseLearner<>(learnerCfg, policy, null, dist, exp, "learner");
            ControlBatch batch = new ControlBatch(policy.batchSize(), policy.obsWidth(), policy.actionWidth());
            DistTraining training = joinGroup(policy, runCfg))
        {
            if (null != training)
            {
                learner.distributed(training);
            }
            policy.allowFreshOptimizer(cfg.getBoolean("policy.learn.fresh_optimizer_on_resume"));
            policy.fusedUpdate(cfg.getBoolean("policy.learn.fused_update"));
            final TransitionBuffer buffer = new TransitionBuffer(
                cfg.getInt("policy.other.replay_buffer.replay_buffer_size"), policy.obsWidth(), policy.actionWidth(),
                seed + 3);
            final VectorEnv collectEnvs = EnvTypes.envs(cfg, cfg.getInt("env.collector_env_num"));
            collectEnvs.reset(seed);
            final ContinuousCollector collector = new ContinuousCollector(collectEnvs, buffer,
                cfg.getLong("policy.random_collect_size"), seed + 1);
            final Loop loop = new Loop(learner, policy, batch, buffer, collector, progress);
            learner.checkpoints().register("pipeline", loop.schedule::state, loop.schedule::restore);
            learner.checkpoints().register("random", loop::randomState, loop::restoreRandomState);
            final Map<String, Object> elastic = 0 == dist.rank() ? Restarts.summary(attempt, resume, learner) : null;
            final RunOutcome outcome;
            try (collector; ContinuousEvaluator evaluator = loop.evaluator)
            {
                outcome = learner.run(new SerialLoop(learner, loop, cfg.getInt("policy.collect.n_sample"),
                    cfg.getInt("policy.learn.update_per_collect"), cfg.getLong("pipeline.max_env_step"),
                    cfg.getLong("pipeline.max_train_iter")));
            }
            catch (final RuntimeException | Error ex)
            {
                // The summary records the failure too (the exception checkpoint is already saved), then it goes on.
                learner.collectorEnvstep(collector.envsteps());
                final Summary failed = summary(learner, loop, collector, false, exp);
                try
                {
                    writeSummary(fields(failed, loop, elastic, ex), failed.paths(), exp);
                }
                catch (final IOException io)
                {
                    ex.addSuppressed(io);
                }
                throw ex;
            }
            learner.collectorEnvstep(collector.envsteps());
            final Summary summary = summary(learner, loop, collector, RunOutcome.INTERRUPTED == outcome, exp);
            writeSummary(fields(summary, loop, elastic, null), summary.paths(), exp);
            return summary;
        }
    }

    /**
     * On a rank of a data-parallel job: joins the group (every rank must run the same effective config, the
     * checkpoint a restart resumes from included: compared at the rendezvous, a mismatch names its key), averages
     * every optimizer's gradients and broadcasts rank 0's target nets too.
     *
     * @return the wiring, or null for a single process
     */
    private DistTraining joinGroup(final ActorCritic policy, final Config runCfg)
    {
        if (!dist.distributed())
        {
            return null;
        }
        final DistTraining training = DistTraining.join(dist,
            Duration.ofMillis((long)(1000 * cfg.getDouble("pipeline.dist_timeout_s"))), policy.optimizers(),
            GradientSync.bytesOf(cfg.getDouble("dist.bucket_mb")),
            runCfg.settingLines());
        try
        {
            for (final FlatParameters target : policy.targetParameters())
            {
                GradientSync.broadcastParameters(training.group(), target);
            }
            return training;
        }
        catch (final RuntimeException ex)
        {
            training.close();
            throw ex;
        }
    }

    /** Rank 0 writes {@code summary.json}. */
    private void writeSummary(final Map<String, Object> fields, final Map<String, Object> paths, final String exp)
        throws IOException
    {
        if (0 == dist.rank())
        {
            SummaryFile.write(fields, paths, Path.of(exp, "summary.json"));
        }
    }

    private Summary summary(final BaseLearner<ControlBatch> learner, final Loop loop,
        final ContinuousCollector collector, final boolean interrupted, final String exp)
    {
        final double wallS = loop.elapsedS();
        final Map<String, Object> paths = new LinkedHashMap<>();
        final Path best = learner.checkpoints().dir().resolve(BEST_CHECKPOINT);
        paths.put("best_checkpoint", Files.isRegularFile(best) ? best.toString() : null);
        paths.put("log", learner.log().file().toString());
        paths.put("config", Path.of(exp, "total_config.yaml").toString());
        paths.put("world_size", dist.worldSize());
        paths.put("env_steps_all_ranks", collector.envsteps() * dist.worldSize());
        return new Summary(algorithm, cfg.getLong("seed"), loop.schedule.solved(), loop.schedule.stopValue(),
            loop.schedule.bestReturn(), collector.envsteps(), learner.trainIter(), wallS, learner.trainIter() / wallS,
            interrupted, paths);
    }

    /** {@code summary.json}'s fields; {@code elastic} (a restarted job's attempts) and {@code error} may be null. */
    private static Map<String, Object> fields(final Summary summary, final Loop loop,
        final Map<String, Object> elastic, final Throwable error)
    {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("algorithm", summary.algorithm());
        json.put("seed", summary.seed());
        json.put("solved", summary.solved());
        json.put("interrupted", summary.interrupted());
        json.put("error", null == error ? null : error.toString());
        json.put("stop_value", summary.stopValue());
        json.put("best_eval_return", summary.bestEvalReturn());
        json.put("solved_at_env_step", loop.solvedAtEnvStep);
        json.put("solved_at_s", loop.solvedAtS);
        json.put("env_steps", summary.envSteps());
        json.put("train_iter", summary.trainIter());
        json.put("wall_s", summary.wallS());
        json.put("updates_per_s", summary.updatesPerS());
        json.put("evaluations", loop.evaluations);
        if (null != elastic)
        {
            json.put("elastic", elastic);
        }
        return json;
    }

    /** TD3's and SAC's part of the serial pipeline ({@link SerialLoop}): replay, collector, evaluation, update. */
    private final class Loop implements OffPolicyRounds
    {
        private final BaseLearner<ControlBatch> learner;
        private final ActorCritic policy;
        private final ControlBatch batch;
        private final TransitionBuffer buffer;
        private final ContinuousCollector collector;
        private final Consumer<Progress> progress;
        private final ContinuousEvaluator evaluator;
        private final EvalSchedule schedule = new EvalSchedule(cfg.getLong("policy.eval.evaluator.eval_freq"),
            cfg.getDouble("env.stop_value"));
        private final long start = System.nanoTime();
        private final List<Map<String, Object>> evaluations = new java.util.ArrayList<>();
        private long solvedAtEnvStep = -1;
        private double solvedAtS = -1;

        Loop(final BaseLearner<ControlBatch> learner, final ActorCritic policy, final ControlBatch batch,
            final TransitionBuffer buffer, final ContinuousCollector collector, final Consumer<Progress> progress)
        {
            this.learner = learner;
            this.policy = policy;
            this.batch = batch;
            this.buffer = buffer;
            this.collector = collector;
            this.progress = progress;
            this.evaluator = new ContinuousEvaluator(EnvTypes.envs(cfg, cfg.getInt("env.n_evaluator_episode")),
                cfg.getLong("seed") + 10_000);
        }

        @Override
        public boolean sample()
        {
            return buffer.sample(batch);
        }

        @Override
        public boolean canSample()
        {
            return buffer.size() >= batch.size();
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
        public void resume()
        {
            collector.resumeAt(Math.max(0, learner.collectorEnvstep()));
        }

        @Override
        public boolean evaluateIfDue(final long trainIter)
        {
            return schedule.due(trainIter) && evaluate();
        }

        /** @return whether this evaluation reached the stop value */
        private boolean evaluate()
        {
            final double value = evaluator.evaluate(policy);
            final Map<String, Object> row = new LinkedHashMap<>();
            row.put("train_iter", learner.trainIter());
            row.put("env_step", collector.envsteps());
            row.put("return", value);
            evaluations.add(row);
            final boolean solved = schedule.record(value, this::saveBest);
            if (solved)
            {
                solvedAtEnvStep = collector.envsteps();
                solvedAtS = elapsedS();
            }
            progress.accept(new Progress(collector.envsteps(), learner.trainIter(), value, schedule.bestReturn(),
                learner.trainIter() / elapsedS()));
            return solved;
        }

        private void saveBest()
        {
            learner.collectorEnvstep(collector.envsteps());
            if (0 != dist.rank())
            {
                return;
            }
            try
            {
                learner.checkpoints().save(BEST_CHECKPOINT);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot save " + BEST_CHECKPOINT + " in " + learner.checkpoints().dir(),
                    ex);
            }
        }

        @Override
        public void update()
        {
            learner.train(batch, collector.envsteps());
        }

        double elapsedS()
        {
            return Math.max(1e-9, (System.nanoTime() - start) / 1e9);
        }

        /** The collector's exploration and replay streams and the evaluator's start streams. */
        Map<String, Object> randomState()
        {
            final Map<String, Object> state = collector.randomState();
            state.put("eval", evaluator.randomState());
            return state;
        }

        /**
         * Rank 0 continues the saved streams (only rank 0 writes checkpoints, so they are its own). Another rank
         * must not take them (it would explore and sample exactly as rank 0): it draws new streams from its own seed
         * and the restored env step, so that it replays none of the draws it made before. The evaluator's starts
         * are the same on every rank.
         */
        void restoreRandomState(final Map<?, ?> state)
        {
            evaluator.restoreRandomState(state.get("eval"));
            if (0 == dist.rank())
            {
                collector.restoreRandomState(state);
                return;
            }
            final ResumableRandom fresh = new ResumableRandom(rankSeed() ^ (learner.collectorEnvstep()
                * 0x9e3779b97f4a7c15L));
            final Map<String, Object> own = new LinkedHashMap<>();
            own.put("explore", fresh.nextLong());
            own.put("replay", fresh.nextLong());
            collector.restoreRandomState(own);
            policy.restartNoise(fresh.nextLong());
        }

    }
}
