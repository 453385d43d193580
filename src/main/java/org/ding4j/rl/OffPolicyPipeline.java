package org.ding4j.rl;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import org.ding4j.checkpoint.FolderLock;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigFiles;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.internal.JvmFlags;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.LearnerCheckpoints;
import org.ding4j.learner.RunOutcome;
import org.ding4j.policy.Policy;
import org.ding4j.rl.ac.ActorCriticAlgorithm;
import org.ding4j.rl.dqn.DqnAlgorithm;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.rl.pipeline.OffPolicyAlgorithm;
import org.ding4j.rl.pipeline.OffPolicyParts;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.rl.pipeline.ParallelDriver;
import org.ding4j.rl.pipeline.Restarts;
import org.ding4j.rl.pipeline.SerialLoop;
import org.ding4j.rl.ppo.PpoAlgorithm;
import org.ding4j.torch.Seeding;
import org.ding4j.torch.Threads;

/**
 * DI-engine's {@code serial_pipeline} for every algorithm ding4j ships, on any environment whose spaces the algorithm
 * takes ({@code env.type}: {@code cartpole}, {@code pendulum}, {@code acrobot} or a user's
 * {@link org.ding4j.env.Env} class): {@code policy.type} picks DQN ({@code dqn}, the default: the embedded
 * {@code examples/cartpole_dqn.yaml}), TD3 ({@code td3}: {@code examples/pendulum_td3.yaml}), SAC ({@code sac}:
 * {@code examples/pendulum_sac.yaml}) or PPO ({@code ppo}: {@code examples/cartpole_ppo.yaml}, on-policy: rollouts
 * instead of a replay), whose defaults the user's config is deep-merged over; every key is checked before anything
 * starts, errors naming the key. A run evaluates every {@code eval_freq} updates (saving {@code ckpt_best.pth.tar} on
 * a new best), collects {@code n_sample} transitions and grants {@code update_per_collect} updates of a replay batch
 * each (PPO: a rollout, then its epochs of minibatches), until an evaluation reaches {@code stop_value} or a limit
 * ({@code max_env_step}, {@code max_train_iter}); it writes {@code ./{exp_name}/summary.json}.
 * <p>
 * A run of its own never writes over an earlier one: when {@code exp_name} holds an earlier run's files
 * ({@code summary.json}, {@code total_config.yaml}, {@code config.yaml}, {@code ckpt/} or {@code log/}, the user's own
 * by those names too), it writes
 * {@code {exp_name}_{yyMMdd_HHmmss}} instead, as DI-engine's {@code compile_config(renew_dir=True)} does
 * ({@link #config()} and {@link #renewedFrom()} say so), a resume from that folder's checkpoint included. An empty
 * folder, or one of other files, is used as it is. The ranks of a data-parallel job and the attempts of one a
 * launcher may restart ({@code --max-restarts}) keep {@code exp_name}, which they must all agree on (an earlier run's
 * files there are written over: give each such job its own; one job at a time: the folder's lock); rank 0 marks the
 * folder with the job's id ({@link Restarts}), so that a restarted attempt resumes only from checkpoints its own job
 * wrote there.
 * <p>
 * Every algorithm runs under the learner's one lifecycle ({@link BaseLearner#run}: hooks, signals, the stop vote,
 * exception and interrupt checkpoints) as a {@link SerialLoop} over an {@link OffPolicyRun}, or in parallel mode
 * ({@code pipeline.mode: parallel}) as {@code learner.start()} fed by a {@link ParallelDriver}. On the ranks of a
 * data-parallel job ({@code ding4j launch}) every algorithm averages its gradients through c10d, each rank collecting
 * with its own seeds; the nets stay bit-identical, every rank's evaluation gives the same return, and rank 0 alone
 * writes (holding the folder's lock: one job per folder). A launcher's restarted
 * attempt resumes from the newest verified checkpoint ({@link Restarts}). Checkpoints carry the evaluation schedule,
 * the best return and every random stream, so a resume continues them.
 */
public final class OffPolicyPipeline
{
    /** The checkpoint saved on each new best evaluation. */
    public static final String BEST_CHECKPOINT = OffPolicyRun.BEST_CHECKPOINT;

    /** Bounds of the counts that size arrays, tensors and threads (a larger value is refused with its key). */
    private static final long MAX_ENVS = 4096;
    private static final long MAX_BATCH = 1 << 20;
    private static final long MAX_WIDTH = 1 << 16;
    /** A round's collection runs to its end before a stop is seen: about a second of a fast env, not hours. */
    private static final long MAX_N_SAMPLE = 1 << 20;
    /** An evaluation runs its episodes to their ends before a stop is seen: at most this many env steps. */
    private static final long MAX_EVAL_STEPS = 100_000_000;
    /** Nets up to this size (values, gradients, moments and copies) are not checked against the machine's memory. */
    private static final long SMALL_NET_BYTES = 64L << 20;
    /** How often a run of its own renews a folder another run took first before it gives up. */
    private static final int MAX_RENEWALS = 100;
    /** What a run writes into its folder: any of them there means an earlier run's folder. */
    private static final String[] RUN_FILES = {"summary.json", "total_config.yaml", "config.yaml", "ckpt", "log"};

    private final OffPolicyAlgorithm algorithm;
    /** The checked config; a run of its own renews its {@code exp_name} when constructed and again if it must. */
    private Config cfg;
    /** The configured {@code exp_name} when the run writes a renewed folder beside it, else null. */
    private String renewedFrom;
    private final DistInfo dist;
    private final ElasticAttempt attempt;
    /** False for a pipeline made only to evaluate checkpoints (it skips the run's own checks). */
    private final boolean training;
    /** Told the learner once it is built, before training. */
    private Consumer<BaseLearner<?>> onLearner = learner -> { };
    /** {@link #stop()} was asked; read by the run once its learner exists. */
    private volatile boolean stopRequested;
    /** The running run's learner, for {@link #stop()} from another thread; null outside a run. */
    private volatile BaseLearner<?> running;
    /** Whether {@link #run} is running (one run per pipeline at a time: it renews its own config). */
    private final java.util.concurrent.atomic.AtomicBoolean inUse = new java.util.concurrent.atomic.AtomicBoolean();
    /** An interrupt of the run's thread, kept off it while the run sets up and ends; the run's thread only. */
    private boolean interruptPending;
    /** The learner's completed updates when the run ended, however it ended (for a failing rank's report). */
    private volatile long updatesDone;

    /**
     * A single-process run.
     *
     * @param user the user's config (empty: DQN on CartPole, the embedded default)
     * @throws ConfigException naming the first bad key
     */
    public OffPolicyPipeline(final Config user)
    {
        this(user, DistInfo.single(), ElasticAttempt.first());
    }

    /**
     * A run on one rank of a data-parallel job (every rank runs the same config; {@code ding4j launch} starts them),
     * in an attempt of a job that a launcher may restart ({@code ding4j launch --max-restarts N}): a restarted
     * attempt resumes from its job's newest checkpoint of {@code ./{exp_name}/ckpt} that reads back whole (where
     * there is none, from {@code learner.hook.load_ckpt_before_run} as the first attempt did); every rank takes the
     * same file (it is part of the config the ranks compare at the rendezvous), and rank 0's {@code summary.json}
     * records the attempts under {@code elastic}.
     *
     * @param user    the user's config
     * @param dist    this rank's place ({@link DistInfo#single()} for one process)
     * @param attempt which attempt this is ({@link ElasticAttempt#fromEnvironment})
     * @throws ConfigException naming the first bad key
     */
    public OffPolicyPipeline(final Config user, final DistInfo dist, final ElasticAttempt attempt)
    {
        this(user, dist, attempt, true);
    }

    /**
     * A pipeline to {@link #evaluate} checkpoints with ({@code ding4j eval}): the config checked as for a run, but for
     * what only a run needs (its replay within this JVM's heap, a batch within its env-step limit), so that a
     * checkpoint trained with a larger heap evaluates here.
     *
     * @param user the config the checkpoint was trained with
     * @return the pipeline; do not {@link #run} it
     * @throws ConfigException naming the first bad key
     */
    public static OffPolicyPipeline forEvaluation(final Config user)
    {
        return new OffPolicyPipeline(user, DistInfo.single(), ElasticAttempt.first(), false);
    }

    private OffPolicyPipeline(final Config user, final DistInfo dist, final ElasticAttempt attempt,
        final boolean training)
    {
        Objects.requireNonNull(user, "user");
        this.dist = Objects.requireNonNull(dist, "dist");
        this.attempt = Objects.requireNonNull(attempt, "attempt");
        this.algorithm = algorithmOf(user);
        this.cfg = withAlgorithmHint(algorithm, user);
        if (dist.distributed() && !"serial".equals(cfg.getString("pipeline.mode")))
        {
            throw new ConfigException("pipeline.mode", "expected serial with WORLD_SIZE=" + dist.worldSize()
                + " (data-parallel runs the serial pipeline on every rank), got " + cfg.getString("pipeline.mode"));
        }
        // The learner section is open here; the learner's own schema checks it now, before anything starts.
        final String loadPath = BaseLearner.checkConfig(cfg.child("learner")).getString("hook.load_ckpt_before_run");
        if (training && !loadPath.isEmpty())
        {
            requireArchive(loadPath);
        }
        algorithm.check(cfg);
        final String evaluationTooLong = evaluationTooLong(cfg.getLong("env.n_evaluator_episode"));
        if (null != evaluationTooLong)
        {
            throw new ConfigException("env.n_evaluator_episode", evaluationTooLong);
        }
        checkNetMemory(algorithm.parameterCount(cfg));
        this.training = training;
        if (training)
        {
            checkReplay();
            final String configured = cfg.getString("exp_name");
            final String folder = null == sharedJob() ? runFolder(configured, LocalDateTime.now()) : configured;
            if (!folder.equals(configured))
            {
                renewedFrom = configured;
                cfg = cfg.with("exp_name", folder);
            }
        }
    }

    /**
     * @return the id of the job whose ranks or attempts share this run's folder (without a launcher's restart mark),
     *     empty when it has none, null for a run of its own
     */
    private String sharedJob()
    {
        return !dist.distributed() && 0 == attempt.maxRestarts() ? null : ElasticAttempt.jobOf(dist.jobId());
    }

    /**
     * The folder a run of its own writes.
     *
     * @param exp the configured {@code exp_name}
     * @param now the time a renewed folder is named by
     * @return {@code exp} if it holds no earlier run, else {@code exp_yyMMdd_HHmmss} (with {@code _2}, {@code _3}, ...
     *     should that exist too)
     */
    static String runFolder(final String exp, final LocalDateTime now)
    {
        return holdsRun(Path.of(exp)) ? renewed(exp, now) : exp;
    }

    /**
     * @param exp the configured {@code exp_name}
     * @param now the time the folder is named by
     * @return {@code exp_yyMMdd_HHmmss}, with {@code _2}, {@code _3}, ... should that exist
     */
    private static String renewed(final String exp, final LocalDateTime now)
    {
        final Path folder = Path.of(exp);
        final Path absolute = folder.toAbsolutePath().normalize();
        final Path renewed = absolute.resolveSibling(absolute.getFileName() + "_"
            + DateTimeFormatter.ofPattern("yyMMdd_HHmmss").format(now));
        Path candidate = renewed;
        for (int n = 2; Files.exists(candidate); n++)
        {
            candidate = renewed.resolveSibling(renewed.getFileName() + "_" + n);
        }
        // Relative stays relative, as the user wrote it (the console and summary.json show it so).
        return folder.isAbsolute() ? candidate.toString()
            : Path.of("").toAbsolutePath().relativize(candidate).toString();
    }

    /**
     * Refuses a checkpoint to resume from that is missing or no checkpoint archive at all (a mistyped path, a log
     * file) before the run picks and writes its folder, which would otherwise be left holding only the failure's log.
     * One that does not fit the policy is refused when it is loaded, by the learner's {@code load_ckpt} hook.
     */
    private static void requireArchive(final String path)
    {
        final String key = "learner.hook.load_ckpt_before_run";
        try
        {
            TorchCheckpointIO.checkArchive(Path.of(path));
        }
        catch (final java.nio.file.InvalidPathException | java.nio.file.NoSuchFileException ex)
        {
            throw new ConfigException(key, "checkpoint " + path + " does not exist");
        }
        catch (final org.ding4j.checkpoint.CorruptCheckpointException ex)
        {
            // Its message names the file and the fault.
            throw new ConfigException(key, ex.getMessage());
        }
        catch (final IOException ex)
        {
            throw new ConfigException(key, "checkpoint " + path + " cannot be read: " + ex);
        }
    }

    private static boolean holdsRun(final Path folder)
    {
        for (final String name : RUN_FILES)
        {
            if (Files.exists(folder.resolve(name), java.nio.file.LinkOption.NOFOLLOW_LINKS))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the configured {@code exp_name} when it held an earlier run and this run writes a renewed folder beside
     *     it ({@link #config()}'s {@code exp_name}), else null
     */
    public String renewedFrom()
    {
        return renewedFrom;
    }

    /** The replay within half the heap, and a batch it can fill before the run's env-step limit. */
    private void checkReplay()
    {
        final long perTransition = algorithm.bytesPerTransition(cfg);
        final long max = Runtime.getRuntime().maxMemory() / 2 / perTransition;
        final long size = cfg.getLong("policy.other.replay_buffer.replay_buffer_size");
        if (size > max)
        {
            throw new ConfigException("policy.other.replay_buffer.replay_buffer_size", "expected an integer in [1, "
                + max + "], got " + size + " (" + perTransition + " bytes per transition, at most half of the JVM's "
                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB heap; raise -Xmx for more)");
        }
        if (cfg.getInt("policy.learn.batch_size") > size)
        {
            throw new ConfigException("policy.learn.batch_size", "expected at most replay_buffer_size (" + size
                + "), got " + cfg.getInt("policy.learn.batch_size"));
        }
        if (cfg.getInt("policy.learn.batch_size") > cfg.getLong("pipeline.max_env_step"))
        {
            // The run would end at its env-step limit without one update (it once did, without a word).
            throw new ConfigException("policy.learn.batch_size", "expected at most pipeline.max_env_step ("
                + cfg.getLong("pipeline.max_env_step") + ": no batch could be sampled before the run ends), got "
                + cfg.getInt("policy.learn.batch_size"));
        }
    }

    /**
     * The nets' native memory against the machine's: parameters, gradients, Adam's two moments, targets and the
     * copies a run keeps come to about 8 floats per parameter, refused beyond half of the physical memory (a width of
     * 65,536 asked for tens of GB and the process died later).
     */
    private static void checkNetMemory(final long parameters)
    {
        final long bytes = parameters * Float.BYTES * 8;
        if (bytes <= SMALL_NET_BYTES)
        {
            // Fits on any machine that runs libtorch. The question is not asked for such nets: the memory bean's first
            // use loads libmanagement, and a library's load waits while libtorch's runs beside the config check (the
            // dynamic loader's lock, held through libtorch's constructors: 0.2-0.3 s of a start).
            return;
        }
        final long physical = ((com.sun.management.OperatingSystemMXBean)java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getTotalMemorySize();
        if (bytes > physical / 2)
        {
            throw new ConfigException("policy.model", "expected nets that fit in memory: " + parameters
                + " parameters need about " + (bytes >> 20) + " MiB (8 floats each: values, gradients, Adam's "
                + "moments, targets, copies), more than half of this machine's " + (physical >> 20) + " MiB");
        }
    }

    /**
     * @param user a user config
     * @return the algorithm its {@code policy.type} names (DQN when it names none)
     * @throws ConfigException for another type
     */
    public static OffPolicyAlgorithm algorithmOf(final Config user)
    {
        final Object type = user.has("policy") && user.child("policy").has("type") ? user.get("policy.type") : "dqn";
        if ("dqn".equals(type))
        {
            return new DqnAlgorithm();
        }
        if ("td3".equals(type) || "sac".equals(type))
        {
            return new ActorCriticAlgorithm((String)type);
        }
        if ("ppo".equals(type))
        {
            return new PpoAlgorithm();
        }
        throw new ConfigException("policy.type", "expected dqn, td3, sac or ppo, got " + type);
    }

    /**
     * Checks the config against the algorithm's schema; an unknown key also says which algorithm's keys apply and
     * where they are written (a config written for another algorithm, with {@code policy.type} switched, carries
     * keys this one does not have).
     */
    private static Config withAlgorithmHint(final OffPolicyAlgorithm algorithm, final Config user)
    {
        try
        {
            return schema(algorithm).apply(user);
        }
        catch (final ConfigException ex)
        {
            if (!ex.getMessage().contains("unknown key"))
            {
                throw ex;
            }
            throw new ConfigException(ex.keyPath(), ex.detail()
                + "; policy.type " + algorithm.name() + " takes the keys of " + algorithm.defaults().replace(
                "org/ding4j/", "") + " (a config written for another policy.type does not fit it)", ex);
        }
    }

    /** The keys every algorithm shares, over its defaults, and its own. */
    private static ConfigSchema schema(final OffPolicyAlgorithm algorithm)
    {
        final ConfigSchema.Builder schema = ConfigSchema.builder("", ConfigFiles.loadResource(algorithm.defaults()))
            .rule("exp_name", ValueRule.FOLDER_PATH)
            .rule("env.type", EnvTypes::check)
            .rule("env.collector_env_num", ValueRule.integerIn(1, MAX_ENVS))
            .rule("env.evaluator_env_num", ValueRule.integerIn(1, MAX_ENVS))
            .rule("env.n_evaluator_episode", ValueRule.integerIn(1, 1_000_000))
            .rule("env.stop_value", ValueRule.FINITE_NUMBER)
            .rule("env.max_episode_steps", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("policy.model.obs_shape", ValueRule.integerIn(1, MAX_WIDTH))
            .rule("policy.model.action_shape", ValueRule.integerIn(1, MAX_WIDTH))
            .rule("policy.learn.update_per_collect", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("policy.learn.batch_size", ValueRule.integerIn(1, MAX_BATCH))
            .rule("policy.collect.n_sample", ValueRule.integerIn(1, MAX_N_SAMPLE))
            .rule("policy.eval.evaluator.eval_freq", ValueRule.POSITIVE_INTEGER)
            .rule("policy.other.replay_buffer.replay_buffer_size", ValueRule.integerIn(1, Integer.MAX_VALUE))
            .rule("pipeline.mode", v -> "serial".equals(v) || "parallel".equals(v) ? null
                : "expected serial or parallel")
            .rule("pipeline.max_env_step", ValueRule.POSITIVE_INTEGER)
            .rule("pipeline.max_train_iter", ValueRule.POSITIVE_INTEGER)
            .rule("pipeline.dist_timeout_s", ValueRule.POSITIVE_NUMBER)
            .rule("dist.bucket_mb", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1024
                ? null : "expected a number of MiB in [0, 1024] (0: one all-reduce per optimizer)");
        algorithm.rules(schema);
        return schema.open("learner").build();
    }

    /** @return the effective config */
    public Config config()
    {
        return cfg;
    }

    /**
     * @param action told the run's learner once it is built, before training: to register its JMX bean, a hook of
     *               the application's, a Micrometer binder
     * @return this pipeline
     */
    public OffPolicyPipeline onLearner(final Consumer<BaseLearner<?>> action)
    {
        this.onLearner = Objects.requireNonNull(action, "action");
        return this;
    }

    /**
     * Asks the run to end after the update in flight, from any thread, as {@link BaseLearner#stop()} does: its
     * {@code after_run} save and {@code summary.json} (with {@code "stopped": true}) are written and {@link #run}
     * returns. Asked before the run trains (before {@link #run} is called, or during its start-up), the run stops
     * before its first update. Interrupting the thread in {@link #run} stops it too, as a signal would.
     */
    public void stop()
    {
        stopRequested = true;
        final BaseLearner<?> learner = running;
        if (null != learner)
        {
            learner.stop();
        }
    }

    /** @return the algorithm ({@code policy.type}) */
    public OffPolicyAlgorithm algorithm()
    {
        return algorithm;
    }

    /**
     * Runs the job to its end.
     *
     * @param progress receives a report after each evaluation (on the evaluating thread; keep it short)
     * @return the summary, also written to {@code ./{exp_name}/summary.json}
     * @throws IOException if the summary cannot be written
     * @throws RuntimeException what failed the run (the env, a hook, a diverged net), after {@code summary.json}
     *                          recorded it; {@link #run(Consumer, Map)} says more
     */
    public OffPolicyRun.Summary run(final Consumer<OffPolicyRun.Progress> progress) throws IOException
    {
        return run(progress, Map.of());
    }

    /**
     * Runs the job to its end.
     *
     * @param progress receives a report after each evaluation (on the evaluating thread; keep it short)
     * @param startup  times measured before the pipeline existed (JVM start, native load), copied into
     *                 {@code summary.json} under {@code startup}
     * @return the summary, also written to {@code ./{exp_name}/summary.json} (on rank 0); an interrupt of the calling
     *     thread ({@code Future.cancel(true)}) stops the run as SIGINT would (outcome {@code interrupted}, its
     *     checkpoint and summary saved), and the thread's interrupt status is set again when this returns
     * @throws IOException if the summary cannot be written
     * @throws RuntimeException what failed the run (the env, a hook, a diverged net), after {@code summary.json}
     *                          recorded it and the exception checkpoint was saved; a {@code ConfigException} for an
     *                          {@code exp_name} whose folder cannot be written or is another job's
     */
    public OffPolicyRun.Summary run(final Consumer<OffPolicyRun.Progress> progress,
        final Map<String, Object> startup) throws IOException
    {
        Objects.requireNonNull(progress, "progress");
        Objects.requireNonNull(startup, "startup");
        if (!training)
        {
            throw new IllegalStateException("a pipeline made for evaluation does not run");
        }
        // The learner would refuse to start without it; refused here, before the folder and its lock are made.
        JvmFlags.requireAgronaAccess();
        if (!inUse.compareAndSet(false, true))
        {
            throw new IllegalStateException("OffPolicyPipeline: run() is running already (one run per pipeline at a "
                + "time; make another pipeline for another run)");
        }
        // An interrupt is kept off the thread while the run sets up, closes and ends (a FileChannel an interrupted
        // thread touches closes; a join it makes returns before the thread it waits for has ended); the learner gets
        // it as a stop, and the thread has it again when run returns, however it returns.
        interruptPending = Thread.interrupted();
        try
        {
            return runOnce(progress, startup);
        }
        finally
        {
            // A stop() is for the run it came before or during, not the next.
            stopRequested = false;
            inUse.set(false);
            if (interruptPending | Thread.interrupted())
            {
                Thread.currentThread().interrupt();
            }
            interruptPending = false;
        }
    }

    private OffPolicyRun.Summary runOnce(final Consumer<OffPolicyRun.Progress> progress,
        final Map<String, Object> startup) throws IOException
    {
        // Loaded before the warm-up's clock starts: where the application did not load them earlier (the command line
        // does, from main), their load was counted as the warm-up's time (4.4 s of warmup_s for 0.01 s of warm-up).
        // With ding4j's thread counts unless the application set its own (Threads.configure first): on libtorch's and
        // OpenBLAS's defaults (a thread per core, spinning) a DQN run beside busy application threads fell from 700
        // to 40 updates/s.
        Threads.configure();
        final long warmupStart = System.nanoTime();
        Seeding.isolated(() -> {
            algorithm.warmUp(cfg);
            return null;
        });
        final double warmupS = (System.nanoTime() - warmupStart) / 1e9;
        final long setupStart = System.nanoTime();
        final long seed = cfg.getLong("seed");
        // Rank 0 writes the folder; it owns it for the run (another job there is refused, naming this one's pid).
        try (FolderLock lock = takeFolder())
        {
            final String exp = cfg.getString("exp_name");
            final String job = Objects.requireNonNullElse(sharedJob(), "");
            final LearnerCheckpoints.Verified resume = Restarts.resumePoint(attempt, exp, job);
            if (null != lock)
            {
                // Before any checkpoint of this job's: a restart resumes only from those written after the mark.
                Restarts.markFolder(exp, job);
                // Its launcher holds the folder from this rank's end to the job's, so no other job takes it between
                // this attempt and a restart (and mixes its checkpoints with this job's).
                attempt.recordFolder(Path.of(exp));
            }
            final Config runCfg = null == resume ? cfg
                : cfg.with("learner.hook.load_ckpt_before_run", resume.file().toString());
            // Drawn after the warm-up, so that the warm-up's draws do not change the run; the nets are drawn from
            // the config's seed on every rank (rank 0's are broadcast anyway), exploration from the rank's own.
            final OffPolicyParts<?> parts = Seeding.drawn(seed, () -> algorithm.parts(runCfg, seed, rankSeed()));
            return run(parts, runCfg, progress, startup, resume, warmupS, setupStart);
        }
    }

    /** @return this rank's seed for its exploration, env starts and replay sampling: the config's on rank 0 */
    private long rankSeed()
    {
        return cfg.getLong("seed") + 100_000L * dist.rank();
    }

    /**
     * Makes the run's folder and, on rank 0, takes its lock. A run of its own whose folder was taken since it was
     * chosen (another run started with it, into the same earlier run's folder or the same new name) renews it again,
     * so that neither writes over the other: it waits for no one and is refused by no one.
     *
     * @return the folder's lock on rank 0, else null
     */
    private FolderLock takeFolder() throws IOException
    {
        for (int tries = 0; ; tries++)
        {
            final String exp = cfg.getString("exp_name");
            try
            {
                Files.createDirectories(Path.of(exp));
            }
            catch (final IOException ex)
            {
                throw new ConfigException("exp_name", "cannot write the experiment folder "
                    + Path.of(exp).toAbsolutePath() + ": " + why(ex), ex);
            }
            if (0 != dist.rank())
            {
                return null;
            }
            try
            {
                final FolderLock lock = lock(Path.of(exp));
                if (null != sharedJob() || !holdsRun(Path.of(exp)))
                {
                    return lock;
                }
                // Another run wrote it since it was chosen: renewed below.
                lock.close();
            }
            catch (final IllegalStateException ex)
            {
                // Another job holds it: a job's folder is its own, one job at a time; a run of its own renews.
                if (null != sharedJob())
                {
                    throw new ConfigException("exp_name", ex.getMessage(), ex);
                }
            }
            if (tries >= MAX_RENEWALS)
            {
                throw new ConfigException("exp_name", "the folders this run was renewed to kept being taken by other "
                    + "runs (" + MAX_RENEWALS + " in a row)");
            }
            final String configured = null == renewedFrom ? exp : renewedFrom;
            renewedFrom = configured;
            // Renewed even when the taken folder holds no files yet: its holder may not have written any so far.
            cfg = cfg.with("exp_name", renewed(configured, LocalDateTime.now()));
        }
    }

    /** The folder's lock; a folder this process cannot write its lock file into is the key's fault. */
    private FolderLock lock(final Path folder)
    {
        for (int tries = 0; ; tries++)
        {
            try
            {
                return FolderLock.acquire(folder, attempt.folderHolder());
            }
            catch (final java.nio.channels.ClosedByInterruptException ex)
            {
                // An interrupt of this thread closed the lock file's channel as it was taken: the run keeps it for the
                // learner (a stop), and takes the lock again, as often as it must.
                interruptPending |= Thread.interrupted();
                if (tries >= MAX_RENEWALS)
                {
                    throw new java.io.UncheckedIOException("cannot lock " + folder + ": interrupted at every try", ex);
                }
            }
            catch (final IOException ex)
            {
                throw new ConfigException("exp_name", "cannot write the experiment folder " + folder.toAbsolutePath()
                    + ": " + why(ex), ex);
            }
        }
    }

    /** @return what an I/O failure on a path means, in words (the JDK's exception names only the path) */
    private static String why(final IOException ex)
    {
        if (ex instanceof java.nio.file.FileAlreadyExistsException)
        {
            return "something other than a folder is there (" + ex.getMessage() + ")";
        }
        if (ex instanceof java.nio.file.AccessDeniedException)
        {
            return "permission denied (" + ex.getMessage() + ")";
        }
        return ex.getMessage();
    }

    private <B> OffPolicyRun.Summary run(final OffPolicyParts<B> parts, final Config runCfg,
        final Consumer<OffPolicyRun.Progress> progress, final Map<String, Object> startup,
        final LearnerCheckpoints.Verified resume, final double warmupS, final long setupStart) throws IOException
    {
        final long seed = cfg.getLong("seed");
        OffPolicyRun.Summary written = null;
        try (OffPolicyRun<B> run = new OffPolicyRun<>(runCfg, algorithm.name(), seed, rankSeed(), dist, parts,
            progress))
        {
            if (null != renewedFrom)
            {
                // An application learns of it from config() or renewedFrom(); the run's own log says it too.
                run.learner().log().info("exp_name " + renewedFrom + " holds an earlier run: this run writes "
                    + runCfg.getString("exp_name"));
            }
            onLearner.accept(run.learner());
            final double setupS = (System.nanoTime() - setupStart) / 1e9;
            run.startClock();
            final Map<String, Object> elastic = 0 == dist.rank() ? Restarts.summary(attempt, resume, run.learner())
                : null;
            final RunOutcome outcome;
            if (interruptPending)
            {
                interruptPending = false;
                Thread.currentThread().interrupt();
            }
            try
            {
                // Set before the flag is read: a stop() in between sees the learner, one before it set the flag.
                running = run.learner();
                if (stopRequested)
                {
                    run.learner().stop();
                }
                outcome = "parallel".equals(cfg.getString("pipeline.mode")) ? runParallel(run, parts)
                    : run.learner().run(new SerialLoop(run.learner(), run, cfg.getInt("policy.collect.n_sample"),
                    cfg.getInt("policy.learn.update_per_collect"), cfg.getLong("pipeline.max_env_step"),
                    cfg.getLong("pipeline.max_train_iter")));
            }
            catch (final RuntimeException | Error ex)
            {
                interruptPending |= Thread.interrupted();
                // The summary records the failure too (the exception checkpoint is already saved), then it goes on.
                updatesDone = run.learner().trainIter();
                run.writeSummary(withRenewal(run.summary(setupS, warmupS, null, ex)), startup, elastic, ex);
                throw ex;
            }
            finally
            {
                running = null;
            }
            interruptPending |= Thread.interrupted();
            updatesDone = run.learner().trainIter();
            final OffPolicyRun.Summary summary = withRenewal(run.summary(setupS, warmupS, outcome, null));
            if (run.writeSummary(summary, startup, elastic, null))
            {
                written = summary;
            }
            return summary;
        }
        catch (final RuntimeException ex)
        {
            if (null == written)
            {
                throw ex;
            }
            // The run's result stands in its files; what failed is the closing after it (a user env's close(), say).
            throw new IllegalStateException("the run ended (" + Path.of(cfg.getString("exp_name"), "summary.json")
                + " holds its result) but closing it failed: " + ex, ex);
        }
    }

    /** @return the summary, its paths naming the configured folder this run renewed ({@link #renewedFrom()}) */
    private OffPolicyRun.Summary withRenewal(final OffPolicyRun.Summary summary)
    {
        summary.paths().put("renewed_from", renewedFrom);
        return summary;
    }

    private static <B> RunOutcome runParallel(final OffPolicyRun<B> run, final OffPolicyParts<B> parts)
    {
        try (ParallelDriver<B> driver = new ParallelDriver<>(run, parts, Seeding.isolated(parts::actingCopy),
            parts::newBatch))
        {
            return driver.run();
        }
    }

    /** @return the learner's completed updates when {@link #run} ended (0 before it ran) */
    public long updatesDone()
    {
        return updatesDone;
    }

    /**
     * Evaluates a checkpoint's policy ({@code ding4j eval}) on fresh starts of the config's env: DQN greedily on
     * {@code env.evaluator_env_num} envs, TD3 and SAC deterministically with the episodes side by side.
     *
     * @param state    a checkpoint of this config's policy (its {@code model}; the optimizers may be missing)
     * @param episodes episodes to run
     * @param seed     the starts' seed
     * @return {@code {mean, min, max}} return
     * @throws IllegalArgumentException if the checkpoint does not match the config's nets (the tensor named), or
     *     {@code episodes} is below 1 or too many ({@link #requireEvaluationWithinBounds})
     */
    public double[] evaluate(final Map<String, Object> state, final int episodes, final long seed)
    {
        Objects.requireNonNull(state, "state");
        if (episodes < 1)
        {
            throw new IllegalArgumentException("episodes: expected >= 1, got " + episodes);
        }
        requireEvaluationWithinBounds("episodes", episodes);
        return algorithm.evaluate(cfg, state, episodes, seed);
    }

    /**
     * @param what     the name the episodes were given by ({@code --episodes})
     * @param episodes episodes an evaluation would run, each to its end
     * @throws IllegalArgumentException naming {@code what} if they and {@code env.max_episode_steps} come to more
     *                                  than 100,000,000 env steps (hours of stepping)
     */
    public void requireEvaluationWithinBounds(final String what, final long episodes)
    {
        final String problem = evaluationTooLong(episodes);
        if (null != problem)
        {
            throw new IllegalArgumentException(what + ": " + problem);
        }
    }

    /** @return what is wrong with an evaluation of this many episodes, or null if it is within bounds */
    private String evaluationTooLong(final long episodes)
    {
        final long steps = cfg.getLong("env.max_episode_steps");
        return episodes * steps > MAX_EVAL_STEPS ? "expected episodes x env.max_episode_steps <= " + MAX_EVAL_STEPS
            + " (an evaluation runs every episode to its end), got " + episodes + " x " + steps : null;
    }

    /**
     * A serving actor on a saved policy, for a service that acts without training (after a restart, say): the
     * config's nets with the checkpoint's model alone loaded, as {@link #evaluate} reads it, published once. The
     * policy is closed again at once: the actor serves that one publish from any thread for as long as it lives.
     *
     * @param state the checkpoint ({@code new TorchCheckpointIO().read(path)}; its {@code model} at least)
     * @return the actor
     * @throws IllegalArgumentException if the checkpoint does not fit the config's nets (the tensor named)
     */
    public ServingActor serve(final Map<String, Object> state)
    {
        Objects.requireNonNull(state, "state");
        final Policy<?> policy = Seeding.isolated(() -> algorithm.withModel(cfg, state));
        try (AutoCloseable closing = (AutoCloseable)policy)
        {
            return ServingActor.of(policy);
        }
        catch (final Exception ex)
        {
            throw ex instanceof RuntimeException runtime ? runtime : new IllegalStateException(ex);
        }
    }
}
