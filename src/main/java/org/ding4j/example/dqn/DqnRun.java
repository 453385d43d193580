package org.ding4j.example.dqn;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.GradientSync;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.example.envs.EnvTypes;
import org.ding4j.example.pipeline.EvalSchedule;
import org.ding4j.learner.BaseLearner;

/**
 * One run's objects, built from the checked config and closed together: the DQN policy, the learner, the replay
 * buffer, the collector, the evaluation schedule and, on a data-parallel rank, the process group wiring. Each rank
 * explores on its own (env and sampling seeds apart by rank); evaluation replays the same seeded starts everywhere.
 */
final class DqnRun implements AutoCloseable
{
    /** The checkpoint key of the pipeline's own state. */
    static final String PIPELINE_STATE = "pipeline";
    /** The checkpoint key of rank 0's random streams. */
    static final String RANDOM_STATE = "random";

    private final Config cfg;
    private final long seed;
    private final String exp;
    private final DistInfo dist;
    private final Consumer<DqnPipeline.Progress> progress;
    private final DqnPolicy policy;
    private final BaseLearner<DqnBatch> learner;
    private final DistTraining distTraining;
    private final ReplayBuffer buffer;
    private final Collector collector;
    private final Evaluator evaluator;
    private final EvalSchedule schedule;
    private final long rankSeed;
    private long start;

    DqnRun(final Config cfg, final long seed, final String exp, final DistInfo dist,
        final Consumer<DqnPipeline.Progress> progress)
    {
        this.cfg = cfg;
        this.seed = seed;
        this.exp = exp;
        this.dist = dist;
        this.progress = progress;
        policy = new DqnPolicy(DqnPipeline.policySettings(cfg));
        learner = new BaseLearner<>(cfg.child("learner"), policy, null, dist, exp, "learner");
        if (dist.distributed())
        {
            // Every rank must run the same effective config (the checkpoint a restart resumes from included):
            // compared line by line at the rendezvous, so a mismatch names its key before any update.
            distTraining = DistTraining.join(dist,
                Duration.ofMillis((long)(1000 * cfg.getDouble("pipeline.dist_timeout_s"))), policy.optimizer(),
                GradientSync.bytesOf(cfg.getDouble("dist.bucket_mb")), cfg.settingLines());
            learner.distributed(distTraining);
            // join broadcast the online net; the target net starts as its copy on every rank too.
            GradientSync.broadcastParameters(distTraining.group(), policy.targetParameters());
        }
        else
        {
            distTraining = null;
        }
        rankSeed = seed + 100_000L * dist.rank();
        final int obsWidth = cfg.getInt("policy.model.obs_shape");
        buffer = new ReplayBuffer(cfg.getInt("policy.other.replay_buffer.replay_buffer_size"), obsWidth,
            cfg.getBoolean("policy.other.replay_buffer.priority"),
            cfg.getDouble("policy.other.replay_buffer.priority_alpha"),
            cfg.getDouble("policy.other.replay_buffer.priority_beta"), rankSeed);
        final VectorEnv collectEnvs = EnvTypes.envs(cfg, cfg.getInt("env.collector_env_num"));
        collectEnvs.reset(rankSeed);
        collector = new Collector(collectEnvs, buffer, cfg.getDouble("policy.other.eps.start"),
            cfg.getDouble("policy.other.eps.end"), cfg.getDouble("policy.other.eps.decay"), cfg.getInt("policy.nstep"),
            cfg.getDouble("policy.discount_factor"), cfg.getBoolean("policy.collect.truncation_bootstraps"),
            rankSeed + 1);
        // DI-engine seeds its evaluator envs apart from the collector's; these replay one set of starts.
        evaluator = new Evaluator(EnvTypes.envs(cfg, cfg.getInt("env.evaluator_env_num")),
            cfg.getInt("env.n_evaluator_episode"), seed + 10_000, true);
        schedule = new EvalSchedule(cfg.getLong("policy.eval.evaluator.eval_freq"), cfg.getDouble("env.stop_value"));
        // Checkpoints carry the run, not only the learner: a resume keeps the best return, the schedule and the
        // random streams (exploration, env starts, sampling), so it continues them instead of replaying its seed's.
        learner.checkpoints().register(PIPELINE_STATE, schedule::state, schedule::restore);
        learner.checkpoints().register(RANDOM_STATE, this::randomState, this::restoreRandomState);
        policy.allowFreshOptimizer(cfg.getBoolean("policy.learn.fresh_optimizer_on_resume"));
        policy.fusedUpdate(cfg.getBoolean("policy.learn.fused_update"));
        if (policy.fusedUpdate())
        {
            // The greedy forwards of collection and evaluation take the native path too (each its own scratch).
            fuseActors(policy.online(), policy.parameters());
        }
    }

    private Map<String, Object> randomState()
    {
        final Map<String, Object> state = new LinkedHashMap<>(collector.randomState());
        state.put("replay", buffer.randomState());
        return state;
    }

    /**
     * Rank 0 continues the saved streams (only rank 0 writes checkpoints, so they are its own). Another rank must not
     * take them (it would explore exactly as rank 0): it draws new streams from its own seed and the restored env
     * step, so that it does not replay the draws it made from its seed before.
     */
    private void restoreRandomState(final Map<String, Object> state)
    {
        if (0 == dist.rank())
        {
            collector.restoreRandomState(state);
            if (!(state.get("replay") instanceof Long replay))
            {
                throw new IllegalArgumentException("random state: expected replay (an int), got " + state);
            }
            buffer.restoreRandomState(replay);
            return;
        }
        // A stream of this rank's own, keyed by the restored env step (different from every earlier resume's).
        final ResumableRandom fresh = new ResumableRandom(rankSeed ^ (learner.collectorEnvstep() * 0x9e3779b97f4a7c15L));
        final Map<String, Object> own = new LinkedHashMap<>();
        own.put("explore", fresh.nextLong());
        own.put("envs", java.util.stream.LongStream.range(0, cfg.getInt("env.collector_env_num"))
            .map(i -> fresh.nextLong()).boxed().toList());
        collector.restoreRandomState(own);
        buffer.restoreRandomState(fresh.nextLong());
    }

    /**
     * Runs the collector's and evaluator's greedy forwards of {@code net} through the fused native forward.
     *
     * @param net    the net they act with
     * @param params its flat parameters
     */
    void fuseActors(final QNetwork net, final org.ding4j.torch.FlatParameters params)
    {
        final DqnPolicy.Settings settings = policy.settings();
        collector.fuse(net, params, settings.hidden(), settings.dueling());
        evaluator.fuse(net, params, settings.hidden(), settings.dueling());
    }

    /** Starts the training wall clock (setup excluded). */
    void startClock()
    {
        start = System.nanoTime();
    }

    /**
     * Evaluates the net when due, reports progress.
     *
     * @param net       the net to evaluate (the learner's, or the collector thread's copy)
     * @param trainIter updates so far
     * @param onNewBest what saves the best checkpoint
     * @return whether to stop (solved)
     */
    boolean evaluateIfDue(final QNetwork net, final long trainIter, final Runnable onNewBest)
    {
        if (!schedule.due(trainIter))
        {
            return false;
        }
        final boolean solved = schedule.record(evaluator.evaluate(net).meanReturn(), onNewBest);
        progress.accept(new DqnPipeline.Progress(collector.envsteps(), trainIter, collector.epsilon(),
            schedule.lastReturn(), schedule.bestReturn(), trainIter / elapsedS()));
        return solved;
    }

    /**
     * Saves {@code ckpt_best} on rank 0 at the current counters, through the learner's checkpoints (not its
     * {@code save_ckpt_after_run} hook, which {@code learner.hook.save_ckpt_after_run: false} removes).
     */
    void saveBest()
    {
        learner.collectorEnvstep(collector.envsteps());
        if (0 != dist.rank())
        {
            return;
        }
        try
        {
            learner.info("save ckpt_best in " + learner.checkpoints().save(DqnPipeline.BEST_CHECKPOINT));
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException("cannot save " + DqnPipeline.BEST_CHECKPOINT + " in "
                + learner.checkpoints().dir(), ex);
        }
    }

    private double elapsedS()
    {
        return Math.max(1e-9, (System.nanoTime() - start) / 1e9);
    }

    DqnPipeline.Summary summary(final double setupS, final double warmupS, final boolean interrupted,
        final Throwable error)
    {
        final double wallS = elapsedS();
        final Path ckptDir = learner.checkpoints().dir();
        final Path best = ckptDir.resolve(DqnPipeline.BEST_CHECKPOINT);
        final Map<String, Object> paths = new LinkedHashMap<>();
        List<String> checkpoints;
        try (Stream<Path> files = Files.exists(ckptDir) ? Files.list(ckptDir) : Stream.empty())
        {
            checkpoints = files.filter(f -> !AtomicFiles.isTemporary(f)).map(Path::toString).sorted().toList();
        }
        catch (final IOException ex)
        {
            checkpoints = List.of();
        }
        paths.put("checkpoints", checkpoints);
        paths.put("best_checkpoint", Files.isRegularFile(best) ? best.toString() : null);
        paths.put("log", learner.log().file().toString());
        paths.put("tensorboard", Path.of(exp, "log", "learner", "learner_tb_logger").toString());
        paths.put("config", Path.of(exp, "total_config.yaml").toString());
        paths.put("world_size", dist.worldSize());
        paths.put("env_steps_all_ranks", collector.envsteps() * dist.worldSize());
        return new DqnPipeline.Summary(schedule.solved(), schedule.stopValue(), schedule.bestReturn(),
            collector.envsteps(), learner.trainIter(), wallS, setupS, warmupS, learner.trainIter() / wallS,
            cfg.getString("pipeline.mode"), seed, paths, interrupted, null == error ? null : error.toString());
    }

    Config config()
    {
        return cfg;
    }

    DqnPolicy policy()
    {
        return policy;
    }

    BaseLearner<DqnBatch> learner()
    {
        return learner;
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
