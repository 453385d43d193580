package org.ding4j.example.dqn;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.env.Discrete;
import org.ding4j.example.envs.EnvTypes;
import org.ding4j.example.pipeline.Restarts;
import org.ding4j.example.pipeline.SerialLoop;
import org.ding4j.example.pipeline.SummaryFile;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.LearnerCheckpoints;
import org.ding4j.learner.RunOutcome;
import org.ding4j.torch.Activation;

/**
 * DQN end to end on any environment with a {@link Discrete} action space ({@code env.type}: {@code cartpole} by
 * default, or a user's {@link org.ding4j.env.Env} class), as DI-engine's {@code serial_pipeline(cartpole_dqn_config)}
 * runs it: collect {@code n_sample} transitions epsilon-greedily, push them, then {@code update_per_collect} times
 * sample a batch, {@code learner.train} it and feed the priorities back; evaluate every {@code eval_freq} updates
 * (greedy, the same seeded starts each time), save {@code ckpt_best.pth.tar} on a new best return, and stop at
 * {@code stop_value}, {@code max_env_step} or {@code max_train_iter}. With {@code pipeline.mode: parallel} the
 * collector and evaluator run on their own thread with a copy of the net refreshed from the learner's after every
 * collect, and the learner runs {@code start()} pulling batches through its {@code AsyncDataLoader}; the loader's
 * source keeps the serial ratio of updates to env steps, so both modes run the same algorithm.
 * <p>
 * The config is {@code examples/cartpole_dqn.yaml} (embedded) deep-merged with the user's; every key is checked
 * before anything starts, errors naming the key. Each run writes {@code ./{exp_name}/summary.json}. Both modes run
 * under the learner's one lifecycle ({@link BaseLearner#run}: hooks, signals, stop vote, exception and interrupt
 * checkpoints): serial mode as a {@link SerialLoop} over {@link DqnRounds}, parallel mode as {@code learner.start()}
 * fed by a {@link ParallelDriver}. The pieces: {@link DqnRun} wires one run's objects,
 * {@link org.ding4j.example.pipeline.EvalSchedule} decides when to evaluate and keeps the best return, {@link WarmUp}
 * warms the JIT, {@link SummaryFile} writes the summary and {@link Restarts} resumes a restarted attempt.
 */
public final class DqnPipeline
{
    /** The embedded default config on the class path. */
    public static final String DEFAULT_CONFIG = "org/ding4j/examples/cartpole_dqn.yaml";
    /** The checkpoint saved on each new best evaluation. */
    public static final String BEST_CHECKPOINT = "ckpt_best.pth.tar";

    /** Bounds of the counts that size arrays, tensors and threads (a larger value is refused with its key). */
    private static final long MAX_ENVS = 4096;
    private static final long MAX_NSTEP = 10_000;
    private static final long MAX_BATCH = 1 << 20;
    private static final long MAX_WIDTH = 1 << 16;
    private static final long MAX_LOADER_WORKERS = 256;

    private static final ConfigSchema SCHEMA = ConfigSchema.builder("", ConfigFiles.loadResource(DEFAULT_CONFIG))
        .rule("exp_name", ValueRule.FOLDER_PATH)
        .rule("env.collector_env_num", ValueRule.integerIn(1, MAX_ENVS))
        .rule("env.evaluator_env_num", ValueRule.integerIn(1, MAX_ENVS))
        .rule("env.n_evaluator_episode", ValueRule.integerIn(1, 1_000_000))
        .rule("env.stop_value", ValueRule.FINITE_NUMBER)
        .rule("env.max_episode_steps", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("env.type", EnvTypes::check)
        .rule("policy.model.obs_shape", ValueRule.integerIn(1, MAX_WIDTH))
        .rule("policy.model.action_shape", ValueRule.integerIn(1, MAX_WIDTH))
        .rule("policy.model.encoder_hidden_size_list", DqnPipeline::positiveWidths)
        .rule("policy.model.activation", v -> v instanceof String s && null != Activation.spelled(s) ? null
            : "expected " + Activation.CHOICES)
        .rule("policy.nstep", ValueRule.integerIn(1, MAX_NSTEP))
        .rule("policy.discount_factor", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1
            ? null : "expected a number in [0, 1]")
        .rule("policy.learn.update_per_collect", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("policy.learn.batch_size", ValueRule.integerIn(1, MAX_BATCH))
        .rule("policy.learn.learning_rate", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.target_update_freq", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("policy.learn.target_theta", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1
            ? null : "expected a number in [0, 1]")
        .rule("policy.learn.loss", v -> "mse".equals(v) || "huber".equals(v) ? null : "expected mse or huber")
        .rule("policy.learn.grad_clip", v -> v instanceof Number n && n.doubleValue() >= 0 ? null
            : "expected a number >= 0")
        .rule("policy.collect.n_sample", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("policy.eval.evaluator.eval_freq", ValueRule.POSITIVE_INTEGER)
        .rule("policy.other.eps.type", v -> "exp".equals(v) ? null : "expected exp (exponential decay)")
        .rule("policy.other.eps.decay", ValueRule.POSITIVE_NUMBER)
        .rule("policy.other.replay_buffer.replay_buffer_size", ValueRule.integerIn(1, Integer.MAX_VALUE))
        .rule("pipeline.mode", v -> "serial".equals(v) || "parallel".equals(v) ? null : "expected serial or parallel")
        .rule("pipeline.max_env_step", ValueRule.POSITIVE_INTEGER)
        .rule("pipeline.max_train_iter", ValueRule.POSITIVE_INTEGER)
        .rule("pipeline.warmup_updates", ValueRule.integerIn(0, Integer.MAX_VALUE))
        .rule("pipeline.dist_timeout_s", ValueRule.POSITIVE_NUMBER)
        .rule("dist.bucket_mb", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1024 ? null
            : "expected a number of MiB in [0, 1024] (0: one all-reduce after backward)")
        .open("learner")
        .build();

    /**
     * A progress report, sent after each evaluation (and at the end).
     *
     * @param envSteps       env steps so far
     * @param trainIter      updates so far
     * @param epsilon        exploration epsilon now
     * @param lastEvalReturn the latest evaluation's mean return
     * @param bestEvalReturn the best so far
     * @param updatesPerS    updates per second of training wall time so far
     */
    public record Progress(long envSteps, long trainIter, double epsilon, double lastEvalReturn,
        double bestEvalReturn, double updatesPerS)
    {
    }

    /**
     * What a run did; also written as {@code summary.json}.
     *
     * @param solved         whether an evaluation reached {@code stop_value}
     * @param stopValue      the target return
     * @param bestEvalReturn the best evaluation mean return
     * @param envSteps       env steps taken
     * @param trainIter      updates done
     * @param wallS          training wall time (from the first collect to the end; setup excluded)
     * @param setupS         building nets, learner, envs and buffer
     * @param warmupS        the warm-up on throwaway nets before setup ({@code pipeline.warmup_updates})
     * @param updatesPerS    updates per second of training wall time
     * @param mode           serial or parallel
     * @param seed           the run's seed
     * @param paths          where the checkpoints, logs and TensorBoard files are
     * @param interrupted    whether SIGINT/SIGTERM stopped it (rank 0 saved {@code ckpt_interrupt})
     * @param error          what failed the run (then rethrown after this summary was written), or null
     */
    public record Summary(boolean solved, double stopValue, double bestEvalReturn, long envSteps, long trainIter,
        double wallS, double setupS, double warmupS, double updatesPerS, String mode, long seed, Map<String, Object> paths,
        boolean interrupted, String error)
    {
    }

    private final Config cfg;
    private final DistInfo dist;
    private final ElasticAttempt attempt;
    /** Whether the user named a checkpoint to resume from (then a restart resumes from it, not the newest). */
    private final boolean explicitLoadPath;
    /** The learner's completed updates when the run ended, however it ended (for a failing rank's report). */
    private volatile long updatesDone;

    /**
     * A single-process run.
     *
     * @param user the user's config (null: the embedded default), deep-merged over the default
     * @throws ConfigException naming the first bad key
     */
    public DqnPipeline(final Config user)
    {
        this(user, DistInfo.single());
    }

    /**
     * A run on one rank of a data-parallel job (every rank runs the same config; {@code ding4j launch} starts them).
     * Each rank collects with its own env and buffer seeds ({@code seed + rank}) and averages its gradients with
     * the others through c10d every update; parameters stay bit-identical, so every rank's evaluation (same seeded
     * starts on all ranks) returns the same value and all stop at the same update. Rank 0 alone writes the config,
     * the checkpoints, TensorBoard and {@code summary.json}. Serial mode only.
     *
     * @param user the user's config, deep-merged over the default
     * @param dist this rank's place
     * @throws ConfigException naming the first bad key
     */
    public DqnPipeline(final Config user, final DistInfo dist)
    {
        this(user, dist, ElasticAttempt.first());
    }

    /**
     * A run on one rank in an attempt of a job that a launcher restarts ({@code ding4j launch --max-restarts N}).
     * A restarted attempt without an explicit {@code learner.hook.load_ckpt_before_run} resumes from the newest
     * checkpoint of {@code ./{exp_name}/ckpt} that reads back whole ({@link LearnerCheckpoints#newestVerified});
     * every rank takes the same file (it is part of the config the ranks compare at the rendezvous), and rank 0's
     * {@code summary.json} records the attempts under {@code elastic}.
     *
     * @param user    the user's config, deep-merged over the default
     * @param dist    this rank's place
     * @param attempt which attempt this is ({@link ElasticAttempt#fromEnvironment})
     * @throws ConfigException naming the first bad key
     */
    public DqnPipeline(final Config user, final DistInfo dist, final ElasticAttempt attempt)
    {
        this.dist = Objects.requireNonNull(dist, "dist");
        this.attempt = Objects.requireNonNull(attempt, "attempt");
        this.cfg = SCHEMA.apply(user);
        if (dist.distributed() && !"serial".equals(cfg.getString("pipeline.mode")))
        {
            throw new ConfigException("pipeline.mode", "expected serial with WORLD_SIZE=" + dist.worldSize()
                + " (data-parallel runs the serial pipeline on every rank), got " + cfg.getString("pipeline.mode"));
        }
        // The learner section is open here; the learner's own schema checks it now, before anything starts.
        final Config learner = BaseLearner.checkConfig(cfg.child("learner"));
        this.explicitLoadPath = !learner.getString("hook.load_ckpt_before_run").isEmpty();
        final String workers = ValueRule.integerIn(0, MAX_LOADER_WORKERS).check(learner.get("dataloader.num_workers"));
        if (null != workers)
        {
            throw new ConfigException("learner.dataloader.num_workers", workers + ", got "
                + learner.get("dataloader.num_workers"));
        }
        checkSpaces(cfg);
        if (cfg.getInt("policy.learn.batch_size") > cfg.getInt("policy.other.replay_buffer.replay_buffer_size"))
        {
            throw new ConfigException("policy.learn.batch_size", "expected at most replay_buffer_size ("
                + cfg.getInt("policy.other.replay_buffer.replay_buffer_size") + "), got "
                + cfg.getInt("policy.learn.batch_size"));
        }
    }

    /** @return the embedded default config */
    public static Config defaultConfig()
    {
        return SCHEMA.defaults();
    }

    /** @return the effective config */
    public Config config()
    {
        return cfg;
    }

    /** @return the policy's settings from the checked config's {@code policy.*} (net shape, activation, loss) */
    public DqnPolicy.Settings policySettings()
    {
        return policySettings(cfg);
    }

    /** The policy's settings from {@code policy.*}. */
    static DqnPolicy.Settings policySettings(final Config cfg)
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

    /**
     * Runs the job to its end.
     *
     * @param progress receives a report after each evaluation (on the evaluating thread; keep it short)
     * @param startup  times measured before the pipeline existed (JVM start, native load), copied into
     *                 {@code summary.json} under {@code startup}
     * @return the summary, also written to {@code ./{exp_name}/summary.json}
     * @throws IOException if the summary cannot be written
     */
    public Summary run(final Consumer<Progress> progress, final Map<String, Object> startup) throws IOException
    {
        Objects.requireNonNull(progress, "progress");
        final long warmupStart = System.nanoTime();
        WarmUp.run(cfg, cfg.getInt("pipeline.warmup_updates"));
        final double warmupS = (System.nanoTime() - warmupStart) / 1e9;
        final long setupStart = System.nanoTime();
        final long seed = cfg.getLong("seed");
        final String exp = cfg.getString("exp_name");
        // Seeded after the warm-up, so that the warm-up's draws do not change the run.
        torch.manual_seed(seed);
        try
        {
            Files.createDirectories(Path.of(exp));
            if (0 == dist.rank())
            {
                ConfigFiles.writeYaml(cfg, Path.of(exp, "total_config.yaml"));
            }
        }
        catch (final IOException ex)
        {
            throw new ConfigException("exp_name", "cannot write the experiment folder " + Path.of(exp).toAbsolutePath()
                + ": " + ex, ex);
        }
        final LearnerCheckpoints.Verified resume = Restarts.resumePoint(attempt, explicitLoadPath, exp);
        final Config runCfg = null == resume ? cfg
            : cfg.with("learner.hook.load_ckpt_before_run", resume.file().toString());
        try (DqnRun run = new DqnRun(runCfg, seed, exp, dist, progress))
        {
            final double setupS = (System.nanoTime() - setupStart) / 1e9;
            run.startClock();
            final Map<String, Object> elastic = Restarts.summary(attempt, resume, run.learner());
            RunOutcome outcome = null;
            try
            {
                outcome = train(run);
            }
            catch (final RuntimeException | Error ex)
            {
                // The summary records the failure too (the exception checkpoint is already saved), then it goes on.
                writeSummary(run.summary(setupS, warmupS, false, ex), startup, elastic, exp, ex);
                throw ex;
            }
            final Summary summary = run.summary(setupS, warmupS, RunOutcome.INTERRUPTED == outcome, null);
            writeSummary(summary, startup, elastic, exp, null);
            return summary;
        }
    }

    /** @return the learner's completed updates when {@link #run} ended (0 before it ran) */
    public long updatesDone()
    {
        return updatesDone;
    }

    private RunOutcome train(final DqnRun run)
    {
        try
        {
            if ("parallel".equals(cfg.getString("pipeline.mode")))
            {
                try (ParallelDriver driver = new ParallelDriver(run))
                {
                    return driver.run();
                }
            }
            try (DqnRounds rounds = new DqnRounds(run))
            {
                return run.learner().run(new SerialLoop(run.learner(), rounds, cfg.getInt("policy.collect.n_sample"),
                    cfg.getInt("policy.learn.update_per_collect"), cfg.getLong("pipeline.max_env_step"),
                    cfg.getLong("pipeline.max_train_iter")));
            }
        }
        finally
        {
            run.learner().collectorEnvstep(run.collector().envsteps());
            updatesDone = run.learner().trainIter();
        }
    }

    /** Rank 0 writes {@code summary.json}; a write failure during a failed run is added to that failure. */
    private void writeSummary(final Summary summary, final Map<String, Object> startup,
        final Map<String, Object> elastic, final String exp, final Throwable failure) throws IOException
    {
        if (0 != dist.rank())
        {
            return;
        }
        try
        {
            SummaryFile.write(fields(summary, startup, elastic), summary.paths(), Path.of(exp, "summary.json"));
        }
        catch (final IOException ex)
        {
            if (null == failure)
            {
                throw ex;
            }
            failure.addSuppressed(ex);
        }
    }

    /** {@code summary.json}'s fields; {@code elastic}: the restarts of a launcher's job, or null (left out). */
    private static Map<String, Object> fields(final Summary summary, final Map<String, Object> startup,
        final Map<String, Object> elastic)
    {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("solved", summary.solved());
        json.put("interrupted", summary.interrupted());
        json.put("error", summary.error());
        json.put("stop_value", summary.stopValue());
        json.put("best_eval_return", summary.bestEvalReturn());
        json.put("env_steps", summary.envSteps());
        json.put("train_iter", summary.trainIter());
        json.put("wall_s", summary.wallS());
        json.put("setup_s", summary.setupS());
        json.put("warmup_s", summary.warmupS());
        json.put("updates_per_s", summary.updatesPerS());
        json.put("mode", summary.mode());
        json.put("seed", summary.seed());
        json.put("startup", startup);
        if (null != elastic)
        {
            json.put("elastic", elastic);
        }
        return json;
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

    /**
     * The env's spaces against the config: a {@link Discrete} action space of {@code action_shape} actions, an
     * observation of {@code obs_shape} floats, and a replay buffer that fits in half the heap at that width.
     */
    private static void checkSpaces(final Config cfg)
    {
        final EnvTypes.Spaces spaces = EnvTypes.spaces(cfg);
        if (!(spaces.action() instanceof Discrete discrete))
        {
            throw new ConfigException("env.type", "expected an environment with a Discrete action space (DQN picks "
                + "one of n actions), got " + cfg.getString("env.type") + " with " + spaces.action());
        }
        EnvTypes.checkWidth(cfg, "policy.model.obs_shape", spaces.observation().flatSize(), "observation width");
        EnvTypes.checkWidth(cfg, "policy.model.action_shape", discrete.n(), "actions");
        final int obsWidth = cfg.getInt("policy.model.obs_shape");
        final long max = Runtime.getRuntime().maxMemory() / 2 / ReplayBuffer.bytesPerTransition(obsWidth);
        final long size = cfg.getLong("policy.other.replay_buffer.replay_buffer_size");
        if (size > max)
        {
            throw new ConfigException("policy.other.replay_buffer.replay_buffer_size", "expected an integer in [1, "
                + max + "], got " + size + " (" + ReplayBuffer.bytesPerTransition(obsWidth) + " bytes per transition, "
                + "at most half of the JVM's " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB heap; raise -Xmx "
                + "for more)");
        }
    }

    /**
     * @param episodes episodes per evaluation
     * @param seed     the start states' seed
     * @return an evaluator on {@code env.evaluator_env_num} envs of this config whose every evaluation starts fresh
     *     episodes from the envs' generators ({@code ding4j eval})
     */
    public Evaluator freshEvaluator(final int episodes, final long seed)
    {
        return new Evaluator(EnvTypes.envs(cfg, cfg.getInt("env.evaluator_env_num")), episodes, seed, false);
    }
}
