package org.ding4j.pipeline;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigFiles;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.GradientSync;
import org.ding4j.hook.HookPosition;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.SignalStop;
import org.ding4j.learner.StopVote;
import org.ding4j.policy.DqnBatch;
import org.ding4j.policy.DqnPolicy;
import org.ding4j.policy.QNetwork;

/**
 * DQN on CartPole end to end, as DI-engine's {@code serial_pipeline(cartpole_dqn_config)} runs it: collect
 * {@code n_sample} transitions epsilon-greedily, push them, then {@code update_per_collect} times sample a batch,
 * {@code learner.train} it and feed the priorities back; evaluate every {@code eval_freq} updates (greedy, the same
 * seeded starts each time), save {@code ckpt_best.pth.tar} on a new best return, and stop at {@code stop_value},
 * {@code max_env_step} or {@code max_train_iter}. With {@code pipeline.mode: parallel} the collector and
 * evaluator run on their own thread with a copy of the net refreshed from the learner's after every collect, and
 * the learner runs {@code start()} pulling batches through its {@code AsyncDataLoader}; the loader's source keeps
 * the serial ratio of updates to env steps, so both modes run the same algorithm.
 * <p>
 * The config is {@code examples/cartpole_dqn.yaml} (embedded) deep-merged with the user's; every key is checked
 * before anything starts, errors naming the key. Each run writes {@code ./{exp_name}/summary.json}.
 */
public final class DqnPipeline
{
    /** The embedded default config on the class path. */
    public static final String DEFAULT_CONFIG = "org/ding4j/examples/cartpole_dqn.yaml";
    /** The checkpoint saved on each new best evaluation. */
    public static final String BEST_CHECKPOINT = "ckpt_best.pth.tar";

    private static final ConfigSchema SCHEMA = ConfigSchema.builder("", ConfigFiles.loadResource(DEFAULT_CONFIG))
        .rule("exp_name", ValueRule.NON_EMPTY_STRING)
        .rule("env.collector_env_num", ValueRule.POSITIVE_INTEGER)
        .rule("env.evaluator_env_num", ValueRule.POSITIVE_INTEGER)
        .rule("env.n_evaluator_episode", ValueRule.POSITIVE_INTEGER)
        .rule("env.stop_value", ValueRule.POSITIVE_NUMBER)
        .rule("env.max_episode_steps", ValueRule.POSITIVE_INTEGER)
        .rule("policy.model.obs_shape", v -> Long.valueOf(CartPole.OBS).equals(v) ? null
            : "expected " + CartPole.OBS + " (CartPole's observation width)")
        .rule("policy.model.action_shape", v -> Long.valueOf(CartPole.ACTIONS).equals(v) ? null
            : "expected " + CartPole.ACTIONS + " (CartPole's actions)")
        .rule("policy.model.encoder_hidden_size_list", DqnPipeline::positiveWidths)
        .rule("policy.nstep", ValueRule.POSITIVE_INTEGER)
        .rule("policy.discount_factor", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1
            ? null : "expected a number in [0, 1]")
        .rule("policy.learn.update_per_collect", ValueRule.POSITIVE_INTEGER)
        .rule("policy.learn.batch_size", ValueRule.POSITIVE_INTEGER)
        .rule("policy.learn.learning_rate", ValueRule.POSITIVE_NUMBER)
        .rule("policy.learn.target_update_freq", ValueRule.POSITIVE_INTEGER)
        .rule("policy.learn.target_theta", v -> v instanceof Number n && n.doubleValue() >= 0 && n.doubleValue() <= 1
            ? null : "expected a number in [0, 1]")
        .rule("policy.learn.loss", v -> "mse".equals(v) || "huber".equals(v) ? null : "expected mse or huber")
        .rule("policy.learn.grad_clip", v -> v instanceof Number n && n.doubleValue() >= 0 ? null
            : "expected a number >= 0")
        .rule("policy.collect.n_sample", ValueRule.POSITIVE_INTEGER)
        .rule("policy.eval.evaluator.eval_freq", ValueRule.POSITIVE_INTEGER)
        .rule("policy.other.eps.type", v -> "exp".equals(v) ? null : "expected exp (exponential decay)")
        .rule("policy.other.eps.decay", ValueRule.POSITIVE_NUMBER)
        .rule("policy.other.replay_buffer.replay_buffer_size", ValueRule.POSITIVE_INTEGER)
        .rule("pipeline.mode", v -> "serial".equals(v) || "parallel".equals(v) ? null : "expected serial or parallel")
        .rule("pipeline.max_env_step", ValueRule.POSITIVE_INTEGER)
        .rule("pipeline.max_train_iter", ValueRule.POSITIVE_INTEGER)
        .rule("pipeline.warmup_updates", ValueRule.NON_NEGATIVE_INTEGER)
        .rule("pipeline.dist_timeout_s", ValueRule.POSITIVE_NUMBER)
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
     * @param interrupted    whether SIGINT/SIGTERM stopped it (serial mode; rank 0 saved {@code ckpt_interrupt})
     */
    public record Summary(boolean solved, double stopValue, double bestEvalReturn, long envSteps, long trainIter,
        double wallS, double setupS, double warmupS, double updatesPerS, String mode, long seed, Map<String, Object> paths,
        boolean interrupted)
    {
    }

    private final Config cfg;
    private final DistInfo dist;

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
        this.dist = Objects.requireNonNull(dist, "dist");
        this.cfg = SCHEMA.apply(user);
        if (dist.distributed() && !"serial".equals(cfg.getString("pipeline.mode")))
        {
            throw new ConfigException("pipeline.mode", "expected serial with WORLD_SIZE=" + dist.worldSize()
                + " (data-parallel runs the serial pipeline on every rank), got " + cfg.getString("pipeline.mode"));
        }
        // The learner section is open here; the learner's own schema checks it now, before anything starts.
        BaseLearner.checkConfig(cfg.child("learner"));
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

    /** The policy's settings from {@code policy.*}. */
    static DqnPolicy.Settings policySettings(final Config cfg)
    {
        final List<Object> widths = cfg.getList("policy.model.encoder_hidden_size_list");
        final long[] hidden = new long[widths.size()];
        for (int i = 0; i < hidden.length; i++)
        {
            hidden[i] = ((Number)widths.get(i)).longValue();
        }
        return new DqnPolicy.Settings(cfg.getInt("policy.model.obs_shape"), cfg.getInt("policy.model.action_shape"),
            hidden, cfg.getBoolean("policy.model.dueling"), cfg.getInt("policy.learn.batch_size"),
            cfg.getDouble("policy.learn.learning_rate"), cfg.getInt("policy.learn.target_update_freq"),
            cfg.getDouble("policy.learn.target_theta"), "huber".equals(cfg.getString("policy.learn.loss")),
            cfg.getDouble("policy.learn.grad_clip"));
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
        warmUp(cfg, cfg.getInt("pipeline.warmup_updates"));
        final double warmupS = (System.nanoTime() - warmupStart) / 1e9;
        final long setupStart = System.nanoTime();
        final long seed = cfg.getLong("seed");
        final String exp = cfg.getString("exp_name");
        // Seeded after the warm-up, so that the warm-up's draws do not change the run.
        torch.manual_seed(seed);
        Files.createDirectories(Path.of(exp));
        if (0 == dist.rank())
        {
            ConfigFiles.writeYaml(cfg, Path.of(exp, "total_config.yaml"));
        }
        try (Run run = new Run(cfg, seed, exp, dist))
        {
            final double setupS = (System.nanoTime() - setupStart) / 1e9;
            final long start = System.nanoTime();
            if ("parallel".equals(cfg.getString("pipeline.mode")))
            {
                run.parallel(progress, start);
            }
            else
            {
                run.serial(progress, start);
            }
            final double wallS = (System.nanoTime() - start) / 1e9;
            final Summary summary = run.summary(wallS, setupS, warmupS);
            if (0 == dist.rank())
            {
                writeSummary(summary, startup, Path.of(exp, "summary.json"));
            }
            return summary;
        }
    }

    /**
     * Runs updates and greedy forwards on throwaway nets and random data, so that the JIT and libtorch's first-call
     * paths are warm before the clock starts; the run's own nets, buffer and generators are untouched.
     */
    private static void warmUp(final Config cfg, final int updates)
    {
        if (0 == updates)
        {
            return;
        }
        final DqnPolicy.Settings settings = policySettings(cfg);
        final java.util.SplittableRandom random = new java.util.SplittableRandom(-1);
        final ReplayBuffer buffer = new ReplayBuffer(2 * settings.batchSize(), CartPole.OBS, false, 0, 0, -1);
        final float[] obs = new float[CartPole.OBS];
        for (int i = 0; i < 2 * settings.batchSize(); i++)
        {
            for (int k = 0; k < obs.length; k++)
            {
                obs[k] = (float)random.nextDouble(-0.1, 0.1);
            }
            buffer.push(obs, 0, random.nextInt(CartPole.ACTIONS), 1f, 0.97f, obs, 0);
        }
        final org.ding4j.policy.LogSink sink = new org.ding4j.policy.LogSink()
        {
            @Override
            public int register(final String key)
            {
                return 0;
            }

            @Override
            public void put(final int index, final double value)
            {
            }

            @Override
            public void priority(final double[] priorities, final int count)
            {
            }
        };
        try (DqnPolicy policy = new DqnPolicy(settings);
            DqnBatch batch = new DqnBatch(settings.batchSize(), CartPole.OBS);
            GreedyActor collect = new GreedyActor(new CartPole(cfg.getInt("env.collector_env_num"), 200, -1));
            GreedyActor evaluate = new GreedyActor(new CartPole(cfg.getInt("env.evaluator_env_num"), 200, -1)))
        {
            policy.registerLogVars(sink);
            final int[] collectActions = new int[cfg.getInt("env.collector_env_num")];
            final int[] evalActions = new int[cfg.getInt("env.evaluator_env_num")];
            for (int i = 0; i < updates; i++)
            {
                buffer.sample(batch);
                policy.forward(batch, Map.of(), sink);
                collect.act(policy.online(), collectActions);
                evaluate.act(policy.online(), evalActions);
            }
        }
    }

    private static void writeSummary(final Summary summary, final Map<String, Object> startup, final Path file)
        throws IOException
    {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("solved", summary.solved());
        json.put("interrupted", summary.interrupted());
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
        json.putAll(summary.paths());
        AtomicFiles.write(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsBytes(json));
    }

    private static String positiveWidths(final Object v)
    {
        if (!(v instanceof List<?> list) || list.isEmpty())
        {
            return "expected a non-empty list of positive integers";
        }
        for (final Object w : list)
        {
            if (!(w instanceof Long l) || l < 1)
            {
                return "expected a non-empty list of positive integers";
            }
        }
        return null;
    }

    /** One run's objects, closed together. */
    private static final class Run implements AutoCloseable
    {
        private final Config cfg;
        private final long seed;
        private final String exp;
        private final DqnPolicy policy;
        private final BaseLearner learner;
        private final ReplayBuffer buffer;
        private final Collector collector;
        private final Evaluator evaluator;
        private final int nSample;
        private final int updatePerCollect;
        private final long evalFreq;
        private final double stopValue;
        private final long maxEnvStep;
        private final long maxTrainIter;
        private final boolean prioritized;
        private final List<String> checkpoints = new ArrayList<>();
        private final DistInfo dist;
        private final DistTraining distTraining;
        private double bestEval = Double.NEGATIVE_INFINITY;
        private double lastEval = Double.NaN;
        private boolean solved;
        private boolean interrupted;
        /** Set on the JVM's signal thread, read by the serial loop. */
        private volatile boolean signalled;
        private long lastEvalIter = -1;

        Run(final Config cfg, final long seed, final String exp, final DistInfo dist)
        {
            this.cfg = cfg;
            this.seed = seed;
            this.exp = exp;
            this.dist = dist;
            policy = new DqnPolicy(policySettings(cfg));
            learner = new BaseLearner(cfg.child("learner"), policy, null, dist, exp, "learner");
            if (dist.distributed())
            {
                distTraining = DistTraining.join(dist,
                    Duration.ofMillis((long)(1000 * cfg.getDouble("pipeline.dist_timeout_s"))), learner,
                    policy.optimizer());
                // attach broadcast the online net; the target net starts as its copy on every rank too.
                GradientSync.broadcastParameters(distTraining.group(), policy.targetParameters());
            }
            else
            {
                distTraining = null;
            }
            // Each rank explores on its own: env and sampling seeds apart by rank, the evaluator's the same.
            final long rankSeed = seed + 100_000L * dist.rank();
            prioritized = cfg.getBoolean("policy.other.replay_buffer.priority");
            buffer = new ReplayBuffer(cfg.getInt("policy.other.replay_buffer.replay_buffer_size"), CartPole.OBS,
                prioritized, cfg.getDouble("policy.other.replay_buffer.priority_alpha"),
                cfg.getDouble("policy.other.replay_buffer.priority_beta"), rankSeed);
            final int maxSteps = cfg.getInt("env.max_episode_steps");
            collector = new Collector(new CartPole(cfg.getInt("env.collector_env_num"), maxSteps, rankSeed), buffer,
                cfg.getDouble("policy.other.eps.start"), cfg.getDouble("policy.other.eps.end"),
                cfg.getDouble("policy.other.eps.decay"), cfg.getInt("policy.nstep"),
                cfg.getDouble("policy.discount_factor"), rankSeed + 1);
            // DI-engine seeds its evaluator envs apart from the collector's; these replay one set of starts.
            evaluator = new Evaluator(new CartPole(cfg.getInt("env.evaluator_env_num"), maxSteps, seed + 10_000),
                cfg.getInt("env.n_evaluator_episode"), seed + 10_000, true);
            nSample = cfg.getInt("policy.collect.n_sample");
            updatePerCollect = cfg.getInt("policy.learn.update_per_collect");
            evalFreq = cfg.getLong("policy.eval.evaluator.eval_freq");
            stopValue = cfg.getDouble("env.stop_value");
            maxEnvStep = cfg.getLong("pipeline.max_env_step");
            maxTrainIter = cfg.getLong("pipeline.max_train_iter");
        }

        /**
         * Collect, train, evaluate until solved or a limit. SIGINT/SIGTERM stop it before the next cycle (on every
         * rank at the same cycle, through one vote per cycle when distributed); rank 0 then saves
         * {@link BaseLearner#INTERRUPT_CHECKPOINT} and the run ends as usual, with {@code interrupted} in its summary.
         */
        void serial(final Consumer<Progress> progress, final long start) throws IOException
        {
            learner.callHook(HookPosition.BEFORE_RUN);
            collector.resumeAt(Math.max(0, learner.collectorEnvstep()));
            final SignalStop signals = SignalStop.install(() -> signalled = true);
            try (DqnBatch batch = new DqnBatch(policy.settings().batchSize(), CartPole.OBS))
            {
                while (true)
                {
                    if (stopAgreed())
                    {
                        interrupted = true;
                        learner.collectorEnvstep(collector.envsteps());
                        learner.saveInterruptCheckpoint();
                        break;
                    }
                    if (evalDue(learner.trainIter())
                        && evaluate(policy.online(), learner.trainIter(), progress, start, this::saveBest))
                    {
                        break;
                    }
                    collector.collect(policy.online(), nSample);
                    for (int u = 0; u < updatePerCollect && learner.trainIter() < maxTrainIter; u++)
                    {
                        if (!buffer.sample(batch))
                        {
                            break;
                        }
                        learner.train(batch, collector.envsteps(), null);
                        if (prioritized)
                        {
                            buffer.updatePriorities(learner.learnInfo().priorityInfo());
                        }
                    }
                    if (collector.envsteps() >= maxEnvStep || learner.trainIter() >= maxTrainIter)
                    {
                        break;
                    }
                }
            }
            finally
            {
                signals.restore();
            }
            learner.callHook(HookPosition.AFTER_RUN);
            learner.collectorEnvstep(collector.envsteps());
        }

        /** This rank's signal flag, or the ranks' agreement on it (the same number of votes on every rank). */
        private boolean stopAgreed()
        {
            final int wish = signalled ? StopVote.SIGNAL : StopVote.CONTINUE;
            return StopVote.SIGNAL == (null == distTraining ? wish : distTraining.vote(wish));
        }

        void parallel(final Consumer<Progress> progress, final long start)
        {
            try (ParallelDriver driver = new ParallelDriver(this, progress, start))
            {
                driver.run();
            }
        }

        boolean evalDue(final long trainIter)
        {
            if (trainIter == lastEvalIter || (trainIter - lastEvalIter < evalFreq && lastEvalIter >= 0))
            {
                return false;
            }
            lastEvalIter = trainIter;
            return true;
        }

        /**
         * Evaluates, saves the best checkpoint through the learner, reports.
         *
         * @return whether to stop (solved)
         */
        boolean evaluate(final QNetwork net, final long trainIter, final Consumer<Progress> progress,
            final long start, final Runnable onNewBest)
        {
            final Evaluator.Result result = evaluator.evaluate(net);
            lastEval = result.meanReturn();
            if (lastEval > bestEval)
            {
                bestEval = lastEval;
                onNewBest.run();
            }
            solved = lastEval >= stopValue;
            progress.accept(progress(start, trainIter));
            return solved;
        }

        void saveBest()
        {
            learner.collectorEnvstep(collector.envsteps());
            learner.saveCheckpoint(BEST_CHECKPOINT);
            final String path = learner.checkpointDir().resolve(BEST_CHECKPOINT).toString();
            if (!checkpoints.contains(path))
            {
                checkpoints.add(path);
            }
        }

        Progress progress(final long start, final long trainIter)
        {
            final double seconds = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
            return new Progress(collector.envsteps(), trainIter, collector.epsilon(), lastEval, bestEval,
                trainIter / seconds);
        }

        Summary summary(final double wallS, final double setupS, final double warmupS)
        {
            final Map<String, Object> paths = new LinkedHashMap<>();
            try (java.util.stream.Stream<Path> files = Files.exists(learner.checkpointDir())
                ? Files.list(learner.checkpointDir()) : java.util.stream.Stream.empty())
            {
                paths.put("checkpoints", files.map(Path::toString).sorted().toList());
            }
            catch (final IOException ex)
            {
                paths.put("checkpoints", checkpoints);
            }
            paths.put("best_checkpoint", checkpoints.isEmpty() ? null : checkpoints.get(0));
            paths.put("log", learner.logFile().toString());
            paths.put("tensorboard", Path.of(exp, "log", "learner", "learner_tb_logger").toString());
            paths.put("config", Path.of(exp, "total_config.yaml").toString());
            paths.put("world_size", dist.worldSize());
            paths.put("env_steps_all_ranks", collector.envsteps() * dist.worldSize());
            return new Summary(solved, stopValue, bestEval, collector.envsteps(), learner.trainIter(), wallS, setupS,
                warmupS, learner.trainIter() / Math.max(1e-9, wallS), cfg.getString("pipeline.mode"), seed, paths,
                interrupted);
        }

        @Override
        public void close()
        {
            if (null != distTraining)
            {
                distTraining.close();
            }
            learner.close();
            collector.close();
            evaluator.close();
            policy.close();
        }
    }

    /**
     * Parallel mode: the collector and evaluator on their own thread with their own copy of the online net, the
     * learner in {@code start()} on the calling thread. The learner publishes its parameters into a flat tensor
     * every {@code update_per_collect} updates and the collector copies them before each collect, both under one
     * lock (one memcpy each way). Each collect that leaves the buffer at least a batch full grants
     * {@code update_per_collect} updates, and the loader's source waits for a grant, so the ratio of updates to env
     * steps is the serial one. A new best evaluation is saved by the learner's thread at its next update (the
     * checkpoint then holds at most a few updates more than the evaluated net).
     */
    private static final class ParallelDriver implements AutoCloseable
    {
        private final Run run;
        private final Consumer<Progress> progress;
        private final long start;
        private final QNetwork actorNet;
        private final org.ding4j.torch.FlatParameters actorParams;
        private final org.bytedeco.pytorch.Tensor published;
        private final DqnBatch[] ring;
        private final Object lock = new Object();
        private final java.util.concurrent.atomic.AtomicLong trainIter = new java.util.concurrent.atomic.AtomicLong();
        private int nextBatch;
        private long granted;
        private long issued;
        private volatile boolean stopping;
        private volatile boolean saveBestRequested;
        private volatile Throwable collectorFailure;

        ParallelDriver(final Run run, final Consumer<Progress> progress, final long start)
        {
            this.run = run;
            this.progress = progress;
            this.start = start;
            final DqnPolicy.Settings settings = run.policy.settings();
            actorNet = new QNetwork(settings.obs(), settings.actions(), settings.hidden(), settings.dueling());
            actorParams = org.ding4j.torch.FlatParameters.of(actorNet.module());
            published = run.policy.parameters().group(0).values().clone();
            // Batches in flight at once: the loader's queue (2 with no workers), one being filled, one training.
            ring = new DqnBatch[6];
            for (int i = 0; i < ring.length; i++)
            {
                ring[i] = new DqnBatch(settings.batchSize(), CartPole.OBS);
            }
        }

        void run()
        {
            final BaseLearner learner = run.learner;
            learner.dataSource(size -> nextBatch());
            learner.setupDataloader();
            learner.registerHook(new org.ding4j.hook.LearnerHook("parallel_pipeline", 0, HookPosition.AFTER_ITER)
            {
                @Override
                public void call(final BaseLearner l)
                {
                    afterIter(l);
                }
            });
            final Thread collectorThread = new Thread(this::collectLoop, "ding4j-collector");
            collectorThread.setDaemon(true);
            // start() runs before_run (a resume's load_ckpt among them) itself, so the collector starts from a
            // before_run hook ordered after load_ckpt: it then acts with the resumed net, counters and epsilon.
            learner.registerHook(new org.ding4j.hook.LearnerHook("parallel_pipeline_start",
                org.ding4j.hook.HookRegistry.SIMPLIFIED_PRIORITY + 1, HookPosition.BEFORE_RUN)
            {
                @Override
                public void call(final BaseLearner l)
                {
                    run.collector.resumeAt(Math.max(0, l.collectorEnvstep()));
                    trainIter.set(l.trainIter());
                    try (org.bytedeco.pytorch.NoGradGuard noGrad = new org.bytedeco.pytorch.NoGradGuard())
                    {
                        published.copy_(run.policy.parameters().group(0).values());
                    }
                    collectorThread.start();
                }
            });
            try
            {
                learner.start();
            }
            finally
            {
                stop();
                joinQuietly(collectorThread);
            }
            if (saveBestRequested)
            {
                saveBestRequested = false;
                run.saveBest();
            }
            learner.collectorEnvstep(run.collector.envsteps());
            if (null != collectorFailure)
            {
                throw new IllegalStateException("collector thread failed: " + collectorFailure, collectorFailure);
            }
        }

        private void afterIter(final BaseLearner learner)
        {
            final long iter = learner.trainIter();
            trainIter.set(iter);
            if (run.prioritized)
            {
                run.buffer.updatePriorities(learner.learnInfo().priorityInfo());
            }
            if (0 == iter % run.updatePerCollect)
            {
                synchronized (lock)
                {
                    try (org.bytedeco.pytorch.NoGradGuard noGrad = new org.bytedeco.pytorch.NoGradGuard())
                    {
                        published.copy_(run.policy.parameters().group(0).values());
                    }
                }
            }
            if (saveBestRequested)
            {
                saveBestRequested = false;
                run.saveBest();
            }
            if (iter >= run.maxTrainIter)
            {
                stop();
            }
        }

        private DqnBatch nextBatch() throws InterruptedException
        {
            final DqnBatch batch = ring[nextBatch];
            nextBatch = (nextBatch + 1) % ring.length;
            synchronized (lock)
            {
                while (!stopping && issued >= granted)
                {
                    lock.wait();
                }
                if (stopping)
                {
                    return batch;
                }
                issued++;
                // The collector may be waiting for the learner to use up its grant.
                lock.notifyAll();
            }
            run.buffer.sample(batch);
            return batch;
        }

        private void collectLoop()
        {
            try
            {
                while (!stopping)
                {
                    synchronized (lock)
                    {
                        try (org.bytedeco.pytorch.NoGradGuard noGrad = new org.bytedeco.pytorch.NoGradGuard())
                        {
                            actorParams.group(0).values().copy_(published);
                        }
                    }
                    final long iter = trainIter.get();
                    if (run.evalDue(iter) && run.evaluate(actorNet, iter, progress, start,
                        () -> saveBestRequested = true))
                    {
                        break;
                    }
                    run.collector.collect(actorNet, run.nSample);
                    run.learner.collectorEnvstep(run.collector.envsteps());
                    if (run.buffer.size() >= ring[0].size())
                    {
                        synchronized (lock)
                        {
                            granted += run.updatePerCollect;
                            lock.notifyAll();
                        }
                    }
                    if (run.collector.envsteps() >= run.maxEnvStep)
                    {
                        break;
                    }
                    // Keep at most one collect's grant ahead, as serial does, so the collector cannot run away.
                    synchronized (lock)
                    {
                        while (!stopping && granted - issued > run.updatePerCollect)
                        {
                            lock.wait();
                        }
                    }
                }
            }
            catch (final Throwable t)
            {
                collectorFailure = t;
            }
            finally
            {
                stop();
            }
        }

        private void stop()
        {
            synchronized (lock)
            {
                stopping = true;
                lock.notifyAll();
            }
            run.learner.stop();
        }

        private static void joinQuietly(final Thread thread)
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close()
        {
            for (final DqnBatch batch : ring)
            {
                batch.close();
            }
            published.close();
            actorParams.close();
            actorNet.close();
        }
    }
}
