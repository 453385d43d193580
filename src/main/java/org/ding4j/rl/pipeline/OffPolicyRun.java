package org.ding4j.rl.pipeline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.stream.Stream;

import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.GradientSync;
import org.ding4j.env.ResumableRandom;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.LearnerHook;
import org.ding4j.internal.Closing;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.RunOutcome;
import org.ding4j.learner.StopSignals;
import org.ding4j.torch.FlatParameters;

/**
 * The half of one off-policy run that every algorithm shares, closed with its {@link OffPolicyParts}: the learner,
 * on a data-parallel rank the process group (every optimizer's gradients averaged, rank 0's parameters and targets
 * broadcast), the evaluation schedule with its best return, the checkpoints' extra state (the schedule and the random
 * streams, so that a resume continues them), {@code ckpt_best} and the summary. As {@link OffPolicyRounds} it is what
 * {@link SerialLoop} drives; an algorithm's parallel mode calls {@link #evaluateIfDue} and {@link #saveBest} itself.
 * Rank 0 alone writes checkpoints and the summary; every rank evaluates the same nets on the same seeded starts, so
 * all reach the same decision.
 *
 * @param <B> the batch type
 */
public final class OffPolicyRun<B> implements OffPolicyRounds, AutoCloseable
{
    /** The checkpoint key of the pipeline's own state (the evaluation schedule and best return). */
    public static final String PIPELINE_STATE = "pipeline";
    /** The checkpoint key of rank 0's random streams. */
    public static final String RANDOM_STATE = "random";
    /** The checkpoint saved on each new best evaluation, in the learner's checkpoint folder. */
    public static final String BEST_CHECKPOINT = "ckpt_best.pth.tar";
    private static final java.util.regex.Pattern DIGITS = java.util.regex.Pattern.compile("\\d+");

    /**
     * A progress report, sent after each evaluation (on the evaluating thread; keep it short).
     *
     * @param envSteps       env steps so far (this rank's)
     * @param trainIter      updates so far
     * @param epsilon        the collector's exploration epsilon (DQN), NaN for an algorithm without one
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
     * @param algorithm      its {@code policy.type}
     * @param seed           the run's seed
     * @param solved         whether an evaluation reached {@code stop_value}
     * @param stopValue      the target return
     * @param bestEvalReturn the best evaluation mean return
     * @param envSteps       env steps taken (this rank's)
     * @param trainIter      updates done
     * @param wallS          training wall time (from the first collect to the end; setup excluded)
     * @param setupS         building nets, learner, envs and replay
     * @param warmupS        the warm-up before setup ({@code pipeline.warmup_updates}, DQN)
     * @param updatesPerS    updates per second of training wall time
     * @param mode           serial or parallel
     * @param interrupted    whether SIGINT/SIGTERM stopped it (rank 0 saved {@code ckpt_interrupt})
     * @param stopped        whether the application's {@code BaseLearner.stop()} ended it before its limits
     * @param error          what failed the run (then rethrown after this summary was written), or null
     * @param paths          where the checkpoints, logs and TensorBoard files are, the world size
     */
    public record Summary(String algorithm, long seed, boolean solved, double stopValue, double bestEvalReturn,
        long envSteps, long trainIter, double wallS, double setupS, double warmupS, double updatesPerS, String mode,
        boolean interrupted, boolean stopped, String error, Map<String, Object> paths)
    {
    }

    private final Config cfg;
    private final String algorithm;
    private final long seed;
    private final long rankSeed;
    private final String exp;
    private final DistInfo dist;
    private final Consumer<Progress> progress;
    private final OffPolicyParts<B> parts;
    private final BaseLearner<B> learner;
    private final DistTraining distTraining;
    private final EvalSchedule schedule;
    private final List<Map<String, Object>> evaluations = new ArrayList<>();
    private volatile long solvedAtEnvStep = -1;
    private volatile double solvedAtS = -1;
    private long start = System.nanoTime();
    /** The update count this process's training began at (a resume's, after before_run loaded it). */
    private long startIter;
    /** Whether the learner's before_run completed (then a failure is the run's, and its summary is written). */
    private volatile boolean started;
    /** Whether a resume restored the evaluation schedule and the random streams (both required). */
    private boolean scheduleRestored;
    private boolean streamsRestored;

    /**
     * On a data-parallel rank joins the group (every rank must run the same effective config, the checkpoint a
     * restart resumes from included: compared line by line at the rendezvous, so a mismatch names its key before any
     * update), then builds the learner over the parts' policy. On failure the parts are closed too.
     *
     * @param cfg       the effective config (its {@code learner} section the learner's)
     * @param algorithm its {@code policy.type}
     * @param seed      the config's seed
     * @param rankSeed  this rank's seed
     * @param dist      this rank's place
     * @param parts     the algorithm's half, owned from now on
     * @param progress  told after each evaluation
     */
    public OffPolicyRun(final Config cfg, final String algorithm, final long seed, final long rankSeed,
        final DistInfo dist, final OffPolicyParts<B> parts, final Consumer<Progress> progress)
    {
        this.cfg = Objects.requireNonNull(cfg, "cfg");
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
        this.seed = seed;
        this.rankSeed = rankSeed;
        this.exp = cfg.getString("exp_name");
        this.dist = Objects.requireNonNull(dist, "dist");
        this.parts = Objects.requireNonNull(parts, "parts");
        this.progress = Objects.requireNonNull(progress, "progress");
        BaseLearner<B> made = null;
        DistTraining joined = null;
        try
        {
            // The group first, the learner (its logs, rank 0's config.yaml) once every rank has joined: a rank of a
            // job refused the folder (its rank 0 found another job there) wrote a line into that job's rank log,
            // and a failed rendezvous left logs and a config behind.
            if (dist.distributed())
            {
                // A signal ends the wait for peers (one that died during start-up would leave this rank waiting out
                // the whole timeout, deaf to its launcher's SIGTERM).
                final Runnable stopWaiting = StopSignals.interruptOnSignal(Thread.currentThread());
                try
                {
                    joined = DistTraining.join(dist,
                        Duration.ofMillis((long)(1000 * cfg.getDouble("pipeline.dist_timeout_s"))),
                        parts.optimizers(), parts.autogradModules(),
                        GradientSync.bytesOf(cfg.getDouble("dist.bucket_mb")), cfg.settingLines());
                }
                finally
                {
                    stopWaiting.run();
                }
            }
            made = new BaseLearner<>(cfg.child("learner"), parts.policy(), null, dist, exp, "learner");
            if (null != joined)
            {
                made.distributed(joined);
                for (final FlatParameters target : parts.targets())
                {
                    GradientSync.broadcastParameters(joined.group(), target);
                }
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // Each closed though another's close fails: the parts hold the policy, which only their close frees.
            Closing.afterFailure(Arrays.asList(parts, made, joined), ex);
            throw ex;
        }
        this.learner = made;
        this.distTraining = joined;
        this.schedule = new EvalSchedule(cfg.getLong("policy.eval.evaluator.eval_freq"),
            cfg.getDouble("env.stop_value"));
        learner.checkpoints().register(PIPELINE_STATE, schedule::state, this::restoreSchedule);
        learner.checkpoints().register(RANDOM_STATE, parts::randomState, this::restoreRandomState);
        learner.registerHook(new StartedHook());
    }

    /**
     * Runs after {@code before_run}'s other hooks (a resume's {@code load_ckpt} among them): the start succeeded, so
     * rank 0 now writes the effective config beside the run's files. A start that fails before it (a refused
     * checkpoint) writes nothing into the folder: no config, no summary.
     */
    private final class StartedHook extends LearnerHook
    {
        StartedHook()
        {
            super("pipeline_started", HookRegistry.SIMPLIFIED_PRIORITY + 1, HookPosition.BEFORE_RUN);
        }

        @Override
        public void call(final HookContext context)
        {
            final String loaded = BaseLearner.checkConfig(cfg.child("learner"))
                .getString("hook.load_ckpt_before_run");
            if (!loaded.isEmpty() && (!scheduleRestored || !streamsRestored))
            {
                // Without them the resume would restart the schedule (best return -inf: a worse net replaces
                // ckpt_best) and replay its seed's random streams: refused before anything is written.
                throw new IllegalArgumentException("resume: " + loaded + " has no '" + (scheduleRestored
                    ? RANDOM_STATE : PIPELINE_STATE) + "' state (a pipeline run's checkpoints carry both its "
                    + "evaluation schedule and its random streams)");
            }
            if (!loaded.isEmpty() && 0 == dist.rank())
            {
                keepTheBestOfThisFolder();
            }
            if (0 == dist.rank())
            {
                try
                {
                    ConfigFiles.writeYaml(cfg, Path.of(exp, "total_config.yaml"));
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException("cannot write " + Path.of(exp, "total_config.yaml") + ": "
                        + ex.getMessage(), ex);
                }
            }
            startIter = learner.trainIter();
            started = true;
            if (!loaded.isEmpty() && 0 == dist.rank())
            {
                warnIfAtLimit(loaded);
            }
        }
    }

    /**
     * The update limit counts from the run's first start, resumes included (as DI-engine's): a resume at or past it
     * runs no update, which a user who meant "this many more" should hear of rather than find an empty run. At the
     * env step limit a resumed run still collects once and runs that round's updates, as the loop's first round
     * always does: said too.
     */
    private void warnIfAtLimit(final String loaded)
    {
        final long maxIter = cfg.getLong("pipeline.max_train_iter");
        final long maxEnvStep = cfg.getLong("pipeline.max_env_step");
        if (learner.trainIter() >= maxIter)
        {
            org.slf4j.LoggerFactory.getLogger(OffPolicyRun.class).warn("resume: {} is at update {}, already at "
                + "pipeline.max_train_iter {} (it counts from the run's first start): no update will run; raise it to "
                + "train on", loaded, learner.trainIter(), maxIter);
        }
        else if (learner.collectorEnvstep() >= maxEnvStep)
        {
            org.slf4j.LoggerFactory.getLogger(OffPolicyRun.class).warn("resume: {} is at env step {}, already at "
                + "pipeline.max_env_step {} (it counts from the run's first start): the run collects one round and "
                + "trains its updates, then ends; raise it to train on", loaded, learner.collectorEnvstep(),
                maxEnvStep);
        }
    }

    /**
     * A resumed job's {@code ckpt_best} may hold a better evaluation than the checkpoint it resumed from (the best
     * came after that save): the schedule takes that return, so only a better evaluation replaces the file. A file
     * that does not read back is left to be replaced, and so is an earlier launched job's in a folder this job kept
     * (older than its mark: not the job's own, and not listed in its summary).
     */
    private void keepTheBestOfThisFolder()
    {
        final Path best = learner.checkpoints().dir().resolve(BEST_CHECKPOINT);
        if (!Files.isRegularFile(best) || !writtenSince(best, jobSince()))
        {
            return;
        }
        try (PointerScope scope = new PointerScope())
        {
            if (new TorchCheckpointIO().read(best).get(PIPELINE_STATE) instanceof Map<?, ?> state
                && state.get("best_eval_return") instanceof Double value)
            {
                schedule.atLeast(value);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            learner.info("resume: " + best + " does not read back (" + ex + "); the next best evaluation replaces it");
        }
    }

    /**
     * The schedule's state, checked against the restored update count too: an evaluation recorded after it (1e12)
     * would keep every evaluation of the run from coming due.
     */
    private void restoreSchedule(final Map<?, ?> state)
    {
        scheduleRestored = true;
        if (state.get("last_eval_iter") instanceof Long at && at > learner.trainIter())
        {
            throw new IllegalArgumentException("pipeline state: last_eval_iter must be <= last_iter ("
                + learner.trainIter() + "), got " + at);
        }
        schedule.restore(state);
    }

    /**
     * Rank 0 continues the saved streams (only rank 0 writes checkpoints, so they are its own); another rank draws
     * streams of its own, keyed by its seed and the restored env step.
     */
    private void restoreRandomState(final Map<?, ?> state)
    {
        streamsRestored = true;
        if (0 == dist.rank())
        {
            parts.restoreRandomState(state);
            return;
        }
        parts.ownRandomStreams(state,
            // Numbered below zero, apart from RunStream's numbers: keyed by the restored env step.
            new ResumableRandom(ResumableRandom.streamSeed(rankSeed, -1 - Math.max(0, learner.collectorEnvstep()))));
    }

    @Override
    public boolean sample()
    {
        return parts.replay().sample(parts.batch());
    }

    @Override
    public boolean canSample()
    {
        return parts.replay().size() >= parts.batchSize();
    }

    @Override
    public void collect(final int transitions)
    {
        parts.collect(transitions);
    }

    @Override
    public long envSteps()
    {
        return parts.envSteps();
    }

    @Override
    public void resume()
    {
        parts.resumeAt(Math.max(0, learner.collectorEnvstep()));
    }

    @Override
    public boolean evaluateIfDue(final long trainIter)
    {
        return evaluateIfDue(trainIter, parts::evaluate, this::saveBest);
    }

    @Override
    public void update()
    {
        learner.train(parts.batch(), parts.envSteps());
        parts.afterUpdate(learner);
    }

    /**
     * Evaluates when due, records the result and reports progress.
     *
     * @param trainIter  updates so far
     * @param evaluation runs one evaluation and gives its mean return (NaN when a stop cut it short)
     * @param onNewBest  what saves the best checkpoint ({@link #saveBest}, or a request for the learner's thread)
     * @return whether the run is solved (then it ends)
     */
    public boolean evaluateIfDue(final long trainIter, final DoubleSupplier evaluation, final Runnable onNewBest)
    {
        if (!schedule.due(trainIter))
        {
            return false;
        }
        final double value = evaluation.getAsDouble();
        if (Double.isNaN(value))
        {
            // Cut short by a stop: nothing to record, and the run ends before its next update.
            return false;
        }
        final long envSteps = parts.envSteps();
        final Map<String, Object> row = new LinkedHashMap<>();
        row.put("train_iter", trainIter);
        row.put("env_step", envSteps);
        row.put("return", value);
        synchronized (evaluations)
        {
            evaluations.add(row);
        }
        final boolean solved = schedule.record(value, onNewBest);
        if (solved)
        {
            solvedAtEnvStep = envSteps;
            solvedAtS = elapsedS();
        }
        progress.accept(new Progress(envSteps, trainIter, parts.epsilon(), value, schedule.bestReturn(),
            (trainIter - startIter) / elapsedS()));
        return solved;
    }

    /**
     * Saves {@code ckpt_best} on rank 0 at the current counters, through the learner's checkpoints (not its
     * {@code save_ckpt_after_run} hook, which {@code learner.hook.save_ckpt_after_run: false} removes).
     */
    public void saveBest()
    {
        learner.collectorEnvstep(parts.envSteps());
        if (0 != dist.rank())
        {
            return;
        }
        try
        {
            learner.info("save ckpt_best in " + learner.checkpoints().save(BEST_CHECKPOINT));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot save " + BEST_CHECKPOINT + " in " + learner.checkpoints().dir()
                + ": " + ex.getMessage(), ex);
        }
    }

    /** Starts the training wall clock (setup excluded). */
    public void startClock()
    {
        start = System.nanoTime();
    }

    private double elapsedS()
    {
        return Math.max(1e-9, (System.nanoTime() - start) / 1e9);
    }

    /** @return since when a launched job's kept folder is its own ({@link Restarts#markedSince}), or null: all of it */
    private FileTime jobSince()
    {
        try
        {
            return Restarts.markedSince(exp, ElasticAttempt.jobOf(dist.jobId()));
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    /** @return whether the file was modified at or after {@code since} (any file when null; none that is gone) */
    private static boolean writtenSince(final Path file, final FileTime since)
    {
        try
        {
            return null == since || Files.getLastModifiedTime(file).compareTo(since) >= 0;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** A file name whose digit runs are padded to 20 places, so that text order is numbers' order. */
    private static String naturalKey(final Path file)
    {
        return DIGITS.matcher(file.getFileName().toString())
            .replaceAll(run -> "0".repeat(Math.max(0, 20 - run.group().length())) + run.group());
    }

    /**
     * @param setupS      the setup's seconds
     * @param warmupS     the warm-up's seconds
     * @param outcome how the learner's run ended, or null when it failed
     * @param error   what failed it, or null
     * @return the run's summary now
     */
    public Summary summary(final double setupS, final double warmupS, final RunOutcome outcome, final Throwable error)
    {
        learner.collectorEnvstep(parts.envSteps());
        final double wallS = elapsedS();
        final Path ckptDir = learner.checkpoints().dir();
        final Path best = ckptDir.resolve(BEST_CHECKPOINT);
        final Map<String, Object> paths = new LinkedHashMap<>();
        List<String> checkpoints;
        try (Stream<Path> files = Files.exists(ckptDir) ? Files.list(ckptDir) : Stream.empty())
        {
            // A launched job keeps its folder, which may hold an earlier job's files: only its own are listed.
            final FileTime since = jobSince();
            // Natural order (iteration_980 before iteration_1805), as text order would not have it.
            checkpoints = files.filter(f -> !AtomicFiles.isTemporary(f) && writtenSince(f, since))
                .sorted(java.util.Comparator.<Path, String>comparing(OffPolicyRun::naturalKey)
                    .thenComparing(java.util.Comparator.naturalOrder()))
                .map(Path::toString).toList();
        }
        catch (final IOException ex)
        {
            checkpoints = List.of();
        }
        paths.put("checkpoints", checkpoints);
        paths.put("best_checkpoint", checkpoints.contains(best.toString()) ? best.toString() : null);
        paths.put("log", learner.log().file().toString());
        paths.put("tensorboard", Path.of(exp, "log", "learner", "learner_tb_logger").toString());
        paths.put("config", Path.of(exp, "total_config.yaml").toString());
        paths.put("world_size", dist.worldSize());
        paths.put("env_steps_all_ranks", parts.envSteps() * dist.worldSize());
        if (null != distTraining)
        {
            // How each rank averaged gradients: the fused updates' buckets, or c10d's Reducer on the autograd path.
            paths.put("gradient_reduction", distTraining.dataParallels().isEmpty() ? "gradient_sync" : "reducer");
        }
        return new Summary(algorithm, seed, schedule.solved(), schedule.stopValue(), schedule.bestReturn(),
            parts.envSteps(), learner.trainIter(), wallS, setupS, warmupS, (learner.trainIter() - startIter) / wallS,
            cfg.getString("pipeline.mode"), RunOutcome.INTERRUPTED == outcome, RunOutcome.STOPPED == outcome,
            null == error ? null : error.toString(), paths);
    }

    /**
     * Rank 0 writes {@code summary.json} atomically; a write failure during a failed run is added to that failure. A
     * run whose start failed (before_run, such as a refused checkpoint) writes none: the folder keeps what it had.
     *
     * @param summary what {@link #summary} gave
     * @param startup times measured before the pipeline existed, under {@code startup} (may be empty)
     * @param elastic the restarts of a launcher's job ({@link Restarts#summary}), or null
     * @param failure what failed the run, or null
     * @return whether this process wrote it (rank 0, the run started, the write succeeded)
     * @throws IOException if the file cannot be written and the run did not fail otherwise
     */
    public boolean writeSummary(final Summary summary, final Map<String, Object> startup,
        final Map<String, Object> elastic, final Throwable failure) throws IOException
    {
        if (0 != dist.rank() || !started)
        {
            return false;
        }
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("algorithm", summary.algorithm());
        json.put("seed", summary.seed());
        json.put("solved", summary.solved());
        json.put("interrupted", summary.interrupted());
        json.put("stopped", summary.stopped());
        json.put("error", summary.error());
        json.put("stop_value", summary.stopValue());
        // JSON has no infinity (Jackson would write the string "-Infinity"): no evaluation yet is null.
        json.put("best_eval_return", Double.isFinite(summary.bestEvalReturn()) ? summary.bestEvalReturn() : null);
        json.put("solved_at_env_step", solvedAtEnvStep);
        json.put("solved_at_s", solvedAtS);
        json.put("env_steps", summary.envSteps());
        json.put("train_iter", summary.trainIter());
        json.put("wall_s", summary.wallS());
        json.put("setup_s", summary.setupS());
        json.put("warmup_s", summary.warmupS());
        json.put("updates_per_s", Double.isFinite(summary.updatesPerS()) ? summary.updatesPerS() : null);
        json.put("mode", summary.mode());
        synchronized (evaluations)
        {
            json.put("evaluations", List.copyOf(evaluations));
        }
        json.put("startup", startup);
        if (null != elastic)
        {
            json.put("elastic", elastic);
        }
        try
        {
            SummaryFile.write(json, summary.paths(), Path.of(exp, "summary.json"));
            return true;
        }
        catch (final IOException ex)
        {
            if (null == failure)
            {
                throw ex;
            }
            failure.addSuppressed(ex);
            return false;
        }
    }

    /** @return the effective config */
    public Config config()
    {
        return cfg;
    }

    /** @return the learner */
    public BaseLearner<B> learner()
    {
        return learner;
    }

    /**
     * Closes the group, the learner and the parts, each though an earlier one's close fails (a hook's close that
     * throws must not leave the policy's native memory, held by the parts, for ever).
     */
    @Override
    public void close()
    {
        Closing.all(distTraining, learner, parts);
    }
}
