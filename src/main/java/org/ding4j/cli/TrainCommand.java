package org.ding4j.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.ElasticAttempt;
import org.ding4j.learner.StopSignals;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.envs.EnvTypes;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.ding4j.torch.Natives;
import org.ding4j.torch.Threads;
import org.slf4j.LoggerFactory;

/**
 * {@code ding4j train [CONFIG] [--set key=value]... [--seed N]}: DQN, TD3, SAC or PPO ({@code policy.type}) on
 * {@code env.type} (CartPole, Pendulum or a class on the class path) through the learner. Without CONFIG it runs
 * the embedded {@code examples/cartpole_dqn.yaml}. On a terminal a live progress line is redrawn;
 * otherwise one plain line per evaluation. Exit 0 when the run solved, reached its limits or was stopped by
 * SIGINT/SIGTERM (serial mode saves {@code ckpt_interrupt.pth.tar} first), 1 on failure, 2 for a bad config or
 * argument.
 */
final class TrainCommand
{
    private final Path config;
    private final Path configOption;
    private final List<String> overrides;
    private final Long seed;
    private final PrintWriter out;

    /** The run, once its config is checked (its update count goes into a failing rank's error file). */
    private OffPolicyPipeline pipeline;

    private TrainCommand(final Cli.Args args)
    {
        config = args.pathAt(0);
        configOption = args.path("--config");
        overrides = args.values("--set");
        seed = args.longValue("--seed");
        out = args.out();
    }

    /** @return the {@code train} command's declaration */
    static Cli.Command command()
    {
        return new Cli.Command("train", "Train DQN, TD3, SAC or PPO (policy.type) on env.type (DI-engine's "
            + "serial_pipeline; default: DQN on CartPole).")
            .optionalParameter("CONFIG", "a YAML or JSON config merged over its policy.type's embedded defaults (dqn: "
                + "examples/cartpole_dqn.yaml, td3/sac: examples/pendulum_td3.yaml/_sac.yaml, ppo: "
                + "examples/cartpole_ppo.yaml)")
            .option("--config", "CONFIG", "the same as the CONFIG argument (e.g. examples/pendulum_sac.yaml)")
            .repeatableOption("--set", "KEY=VALUE", "override one key (dotted path; the value is read as YAML), e.g. "
                + "--set pipeline.mode=parallel")
            .option("--seed", "N", "the run's seed (the config's seed otherwise)")
            .printsProgress()
            .action(args -> new TrainCommand(args).call());
    }

    /**
     * Trains; a failure is also written to the launcher's error file ({@code TORCHELASTIC_ERROR_FILE}) with the
     * updates done, so that {@code ding4j launch} can say which rank failed at which update, as torchrun does.
     */
    private int call() throws Exception
    {
        final ElasticAttempt attempt = ElasticAttempt.fromEnvironment(System.getenv());
        try
        {
            return train(attempt);
        }
        catch (final Exception | Error ex)
        {
            try
            {
                attempt.recordFailure(ex, null == pipeline ? 0 : pipeline.updatesDone());
            }
            catch (final IOException | RuntimeException report)
            {
                ex.addSuppressed(report);
            }
            throw ex;
        }
    }

    private int train(final ElasticAttempt attempt) throws Exception
    {
        final long mainStart = System.nanoTime();
        // First of all: from here on SIGINT/SIGTERM only ask the run to stop, during start-up and the summary too.
        StopSignals.installForProcess();
        // The native libraries load while the config is read and checked on this thread (Main started the load
        // already; a command line run some other way starts it here).
        Natives.loadInBackground();
        // The launcher's logging (logback reading logback-cli.xml, ~50 ms here) set up beside the config check and
        // the native load, instead of inside the learner's constructor on the way to the first update.
        final Thread logInit = Threads.newThread(LoggerFactory::getILoggerFactory, "log-init");
        logInit.start();
        // Main printed the first line (a command line run some other way prints none: its start stands in).
        final long firstLine = 0 != Main.firstLineNanos ? Main.firstLineNanos : mainStart;
        final long configStart = System.nanoTime();
        if (null != config && null != configOption)
        {
            throw new Cli.UsageException("give CONFIG or --config, not both");
        }
        final Path file = null != config ? config : configOption;
        Config user = null == file ? Config.empty() : ConfigFiles.load(file);
        user = ConfigFiles.override(user, overrides);
        if (null != seed)
        {
            if (overrides.stream().anyMatch(o -> o.indexOf('=') > 0 && "seed".equals(o.substring(0,
                o.indexOf('=')).trim())))
            {
                throw new Cli.UsageException("give --seed or --set seed=..., not both");
            }
            user = user.with("seed", seed);
        }
        // RANK/WORLD_SIZE/MASTER_* from `ding4j launch` (or torchrun-style by hand) make this one rank of a job.
        final org.ding4j.dist.DistInfo dist = org.ding4j.dist.DistInfo.fromEnvironment(System.getenv());
        pipeline = new OffPolicyPipeline(user, dist, attempt);
        if (null != System.getProperty("com.sun.management.jmxremote.port")
            || null != System.getProperty("com.sun.management.jmxremote"))
        {
            // The JVM's JMX agent was asked for: the learner's bean is what it is for (not made otherwise, since the
            // platform MBean server costs start-up time).
            pipeline.onLearner(org.ding4j.jmx.LearnerMBean::register);
        }
        final double configS = (System.nanoTime() - configStart) / 1e9;
        final long waitStart = System.nanoTime();
        Natives.load();
        final double nativeWaitS = (System.nanoTime() - waitStart) / 1e9;
        if (!dist.distributed() && Natives.cpuPresets()
            && EnvTypes.builtIn(pipeline.config().getString("env.type"))
            && null == System.getProperty(Natives.LOAD_LIBRARIES_PROPERTY)
            && null == System.getProperty(Natives.LOAD_LIBRARIES_PROPERTY.toLowerCase(java.util.Locale.ROOT)))
        {
            // Nothing else of JavaCPP's loads in this process (no Gloo, no CUDA, no user env's own presets): the
            // per-class library checks are skipped from here on, 0.03-0.04 s of the set-up (Natives' property; a
            // value the user gave stays).
            System.setProperty(Natives.LOAD_LIBRARIES_PROPERTY, "false");
        }
        // The JVM's uptime is asked only now: its first call loads libmanagement, and a library's load waits while
        // libtorch's runs (the dynamic loader's lock, held through libtorch's constructors), so asked at the start
        // it held this thread up for the whole native load. The marks above are turned into uptimes here.
        final double uptimeNowS = uptimeS();
        final double jvmStartS = uptimeNowS - (System.nanoTime() - mainStart) / 1e9;
        final double firstLineS = uptimeNowS - (System.nanoTime() - firstLine) / 1e9;
        // One OpenBLAS thread for this small net: training to solve took 0.88-1.21 s with 1 and 1.40-1.98 s with 2
        // on the 2-core machine (docs/performance.md); -Dding4j.threads.blas=N still wins, and a value that is not a
        // positive integer is refused naming the property.
        final Threads.Settings threads = Threads.configure();
        final Config cfg = pipeline.config();
        out.printf("ding4j train: %s, %s on %s, mode %s, seed %d, threads intra-op %d / OpenBLAS %d, Java %d%s%n",
            cfg.getString("exp_name") + (null == pipeline.renewedFrom() ? ""
                : " (" + pipeline.renewedFrom() + " holds an earlier run)"),
            pipeline.algorithm().name(), cfg.getString("env.type"),
            cfg.getString("pipeline.mode"), cfg.getLong("seed"), threads.intraOp(), threads.blas(),
            Runtime.version().feature(), dist.distributed() ? ", rank " + dist.rank() + " of " + dist.worldSize() : "");
        out.flush();
        final boolean live = null != System.console();
        // Every rank evaluates the same net to the same result; rank 0 reports it.
        final boolean reports = 0 == dist.rank();
        final Map<String, Object> startup = new LinkedHashMap<>();
        startup.put("jvm_start_s", jvmStartS);
        startup.put("first_line_s", firstLineS);
        startup.put("config_s", configS);
        startup.put("native_load_s", Natives.loadSeconds());
        startup.put("native_wait_s", nativeWaitS);
        startup.put("class_data_archive", ClassDataArchive.status());
        // Set up before the learner logs its first line (a log call during SLF4J's set-up is held back and replayed,
        // with a warning on stderr): long done by now, unless this start was slow (no class-data archive yet).
        logInit.join();
        final OffPolicyRun.Summary summary = runChecked(p -> {
            if (!reports)
            {
                return;
            }
            // Four significant digits: a return of 195 or of 0.907 reads as it is (one decimal made 0.85 read 0.9).
            final String line = String.format("env steps %7d | updates %6d |%s eval %8.4g (best %8.4g) | "
                + "%6.0f updates/s", p.envSteps(), p.trainIter(), Double.isNaN(p.epsilon()) ? ""
                : String.format(" eps %.3f |", p.epsilon()), p.lastEvalReturn(), p.bestEvalReturn(), p.updatesPerS());
            if (live)
            {
                out.print("\r" + line);
            }
            else
            {
                out.println(line);
            }
            out.flush();
        }, startup);
        if (live)
        {
            out.println();
        }
        // A run stopped before its first evaluation has no best return (-infinity inside, null in summary.json).
        out.printf("%s after %d env steps and %d updates: %s (stop value %.4g)%n",
            summary.interrupted() ? "interrupted" : summary.solved() ? "solved" : "not solved", summary.envSteps(),
            summary.trainIter(), Double.isFinite(summary.bestEvalReturn()) ? String.format("best eval return %.4g",
            summary.bestEvalReturn()) : "no evaluation yet", summary.stopValue());
        out.printf("time: JVM start to train command %.2f s, then config %.2f s, native load %.2f s on its own thread "
            + "(%.2f s waited), warm-up %.2f s, setup %.2f s, training %.2f s (%.0f updates/s); train command %.2f s%n",
            jvmStartS, configS, Natives.loadSeconds(),
            nativeWaitS, summary.warmupS(), summary.setupS(), summary.wallS(), summary.updatesPerS(),
            (System.nanoTime() - mainStart) / 1e9);
        if (!reports)
        {
            out.flush();
            return 0;
        }
        if (!summary.interrupted() && ClassDataArchive.markComplete())
        {
            out.println("class-data archive for faster starts: written as this JVM exits (once after a build)");
        }
        final Object best = summary.paths().get("best_checkpoint");
        out.printf("best checkpoint: %s%nlogs: %s%nTensorBoard: %s%nsummary: %s%n", null == best ? "none yet" : best,
            summary.paths().get("log"), summary.paths().get("tensorboard"),
            Path.of(pipeline.config().getString("exp_name"), "summary.json"));
        out.flush();
        return 0;
    }

    /**
     * Runs the pipeline; a failure during training is exit 1 (a runtime failure), even when it is an
     * IllegalArgumentException (an env refusing a NaN action after the weights diverged): exit 2 stays for bad
     * arguments and config keys, which are ConfigExceptions, and for a checkpoint to resume from that a before_run
     * hook refused (bad input as much as a bad key: the run never started).
     */
    private OffPolicyRun.Summary runChecked(final java.util.function.Consumer<OffPolicyRun.Progress> progress,
        final Map<String, Object> startup) throws IOException
    {
        try
        {
            return pipeline.run(progress, startup);
        }
        catch (final org.ding4j.config.ConfigException ex)
        {
            throw ex;
        }
        catch (final org.ding4j.hook.HookException ex)
        {
            // The checkpoint to resume from refused (it does not fit or is damaged; a missing one is refused even
            // before, by the pipeline's config check): bad input.
            for (Throwable cause = ex.getCause(); org.ding4j.hook.HookPosition.BEFORE_RUN == ex.position()
                && null != cause; cause = cause.getCause())
            {
                if (cause instanceof IllegalArgumentException || cause instanceof java.nio.file.NoSuchFileException
                    || cause instanceof org.ding4j.checkpoint.CorruptCheckpointException)
                {
                    // Named by its key and file, as a refused config value is (a damaged file's message names it); a
                    // restart's own resume point is no key of the user's.
                    final String file = pipeline.config().getString("learner.hook.load_ckpt_before_run");
                    final String why = java.util.Objects.toString(ex.getCause().getMessage(), ex.getCause().toString());
                    throw new IllegalArgumentException(file.isEmpty() ? why : "learner.hook.load_ckpt_before_run: "
                        + (why.contains(file) ? why : "checkpoint " + file + ": " + why), ex);
                }
            }
            throw ex;
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalStateException(ex.getMessage(), ex);
        }
    }

    private static double uptimeS()
    {
        return ManagementFactory.getRuntimeMXBean().getUptime() / 1e3;
    }
}
