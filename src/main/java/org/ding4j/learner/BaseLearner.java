package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

import org.ding4j.checkpoint.AtomicFiles;
import org.ding4j.checkpoint.CheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.data.AsyncDataLoader;
import org.ding4j.data.DataSource;
import org.ding4j.data.DeviceTransfer;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.StopVote;
import org.ding4j.hook.Checkpoints;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookException;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.Hooks;
import org.ding4j.hook.LearnerHook;
import org.ding4j.hook.LogReducer;
import org.ding4j.internal.JvmFlags;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.ScalarDict;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TickMonitor;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.policy.PriorityFeedback;
import org.slf4j.Logger;

/**
 * DI-engine's {@code BaseLearner}: owns the training side of an RL job. It drives a {@link Policy}'s updates,
 * dispatches hooks at {@code before_run / before_iter / after_iter / after_run}, keeps the log buffer and the tick
 * monitor ({@link LearnerLog}), and writes checkpoints ({@link LearnerCheckpoints}). One update's data path:
 * {@link #train} -> {@code before_iter} hooks -> {@link Policy#forward} writing log vars by index into the sink ->
 * {@code train_time}, {@code lastIter + 1} -> {@code after_iter} hooks -> buffers cleared.
 * <p>
 * Serial training calls {@link #train} in the caller's loop; {@link #run(TrainingLoop)} is the one training
 * lifecycle (hooks, signals, the cross-rank stop vote, exception and interrupt checkpoints) and {@link #start()} is
 * {@code run} over the data loader.
 * <p>
 * Threads: {@link #train}, {@link #run}, {@link #start} and every hook run on one training thread; {@link #stop()}
 * and {@link #close()} may be called from any thread ({@code close()} waits for a running loop to end after its
 * update in flight). Not otherwise thread-safe. Nothing is written to disk until the constructor has checked the
 * JVM flags, the config, the hooks and the policy.
 * <p>
 * Deliberate differences from DI-engine: {@link #lastIter()} counts completed updates (it is incremented before
 * the {@code after_iter} hooks, so {@code iteration_N} holds exactly N updates and a resume continues with update
 * N+1); {@code train_time} of an update is in the buffer before its {@code after_iter} hooks run; the buffers are
 * cleared after the last {@code after_iter} hook (not by {@code log_show}), so every hook sees the iteration's vars;
 * {@code train} returns nothing (the vars are in {@link #logBuffer()} for the hooks); {@code start()} saves
 * {@code ckpt_exception.pth.tar} and rethrows when training fails.
 *
 * @param <B> the batch type of the policy
 */
public class BaseLearner<B> implements AutoCloseable
{
    /** File name of the checkpoint saved when a run fails. */
    public static final String EXCEPTION_CHECKPOINT = "ckpt_exception.pth.tar";
    /** File name of the checkpoint saved when a run is stopped by SIGINT or SIGTERM. */
    public static final String INTERRUPT_CHECKPOINT = "ckpt_interrupt.pth.tar";

    private final Config cfg;
    private final String expName;
    private final String instanceName;
    private final int rank;
    private final int worldSize;
    private final LearnerLog log;
    private final Hooks hooks;
    private final CountVar lastIter = new CountVar(0);
    private final Sink sink = new Sink();
    private final PriorityFeedback priorities = new PriorityFeedback();
    private final Context context = new Context();
    private final LearnerCheckpoints checkpoints;
    private final LearnerRunner runner = new LearnerRunner(this, this::closeResources);
    /** The log's buffer, its scalar dict and the latency recorders, read on every update: cached, not looked up. */
    private final LogBuffer buffer;
    private final ScalarDict scalar;
    private final LearnerLatency latency;
    private final int trainTimeIndex;
    private final int dataTimeIndex;

    private Policy<B> policy;
    private LogReducer logReducer;
    private DataSource<B> dataSource;
    private DeviceTransfer<B> deviceTransfer;
    private AsyncDataLoader<B> dataloader;
    private volatile long collectorEnvstep;
    private boolean learnerDone;
    /** Start of the update whose train_time is measured (the call, or the previous update of a multi-update call). */
    private long updateStart;

    /**
     * Builds a learner.
     *
     * @param cfg          the user's learner config, merged over {@link #defaultConfig()} (null: the defaults)
     * @param policy       the policy, or null to set it later
     * @param tbLogger     where log_show writes scalars and histograms on monitoring ranks, or null for a
     *                     TensorBoard writer in {@code ./{exp}/log/{instance}/{instance}_tb_logger/}
     * @param distInfo     rank and world size, or null to read {@code RANK}/{@code WORLD_SIZE}
     * @param expName      experiment folder (relative to the working directory, or absolute)
     * @param instanceName the learner's name, unique in the experiment
     * @throws IllegalStateException             if the JVM lacks a flag ding4j needs (the message names it), or
     *                                           the effective config cannot be written
     * @throws java.io.UncheckedIOException      naming the file if the text log or TensorBoard file cannot be
     *                                           created
     * @throws org.ding4j.config.ConfigException naming the first bad config key
     */
    public BaseLearner(
        final Config cfg, final Policy<B> policy, final SummaryWriter tbLogger, final DistInfo distInfo,
        final String expName, final String instanceName)
    {
        JvmFlags.requireAgronaAccess();
        final DistInfo dist = null != distInfo ? distInfo : DistInfo.fromEnvironment(System.getenv());
        Config effective = LearnerConfig.SCHEMA.apply(cfg);
        if (dist.worldSize() > 1)
        {
            effective = effective.with("hook.log_reduce_after_iter", true);
        }
        this.cfg = effective;
        this.expName = Objects.requireNonNull(expName, "expName");
        this.instanceName = Objects.requireNonNull(instanceName, "instanceName");
        this.rank = dist.rank();
        this.worldSize = dist.worldSize();
        this.logReducer = 1 == worldSize ? LogReducer.IDENTITY : null;
        this.hooks = HookRegistry.build(effective.child("hook"), "learner.hook");
        this.checkpoints = new LearnerCheckpoints(this, expName, instanceName);
        // A multitask pipeline needs a monitor on every rank, whatever only_monitor_rank0 says.
        final boolean monitoring = 0 == rank || !effective.getBoolean("only_monitor_rank0")
            || effective.getBoolean("is_multitask_pipeline");
        this.log = new LearnerLog(instanceName, rank, monitoring);
        this.buffer = log.buffer();
        this.scalar = buffer.scalar();
        this.latency = log.latency();
        this.trainTimeIndex = scalar.register("train_time");
        this.dataTimeIndex = scalar.register("data_time");
        if (null != policy)
        {
            bind(policy);
        }
        // Last, once everything that can be refused has been checked: the files.
        log.open(expName, tbLogger);
        if (0 == rank)
        {
            writeEffectiveConfig();
            removeStaleTemporaries();
        }
        if (null != policy)
        {
            logPolicy();
        }
    }

    /**
     * A single-process learner named {@code learner} in {@code default_experiment}.
     *
     * @param cfg    the user's learner config
     * @param policy the policy, or null
     */
    public BaseLearner(final Config cfg, final Policy<B> policy)
    {
        this(cfg, policy, null, DistInfo.single(), "default_experiment", "learner");
    }

    /**
     * Checks a learner config the way the constructor does (schema and hook specs) without building a learner, so
     * that a pipeline embedding one can fail before it starts anything.
     *
     * @param cfg the user's learner config, or null
     * @return the effective config
     * @throws org.ding4j.config.ConfigException naming the first bad key
     */
    public static Config checkConfig(final Config cfg)
    {
        final Config effective = LearnerConfig.SCHEMA.apply(cfg);
        HookRegistry.build(effective.child("hook"), "learner.hook");
        return effective;
    }

    /** @return the learner's defaults (SPEC section 1), as a deep immutable tree */
    public static Config defaultConfig()
    {
        return LearnerConfig.SCHEMA.defaults();
    }

    private void writeEffectiveConfig()
    {
        final Path file = Path.of(expName).resolve("config.yaml");
        try
        {
            ConfigFiles.writeYaml(Config.empty().with("learner", cfg), file);
        }
        catch (final IOException ex)
        {
            log.close();
            throw new IllegalStateException("cannot write the effective config to " + file, ex);
        }
    }

    /** A killed earlier run may have left temporary checkpoint files: they are no checkpoints, so they go. */
    private void removeStaleTemporaries()
    {
        try
        {
            for (final Path stale : AtomicFiles.removeStaleTemporaries(checkpoints.dir()))
            {
                info("removed " + stale + ", left by an interrupted write");
            }
        }
        catch (final IOException ex)
        {
            log.close();
            throw new IllegalStateException("cannot clean the checkpoint folder " + checkpoints.dir() + ": " + ex, ex);
        }
    }

    /**
     * Sets the policy: builds the monitor from its {@code monitorVars()} on monitoring ranks, registers its log
     * keys, and logs {@code policy.info()} when {@code log_policy} is on.
     *
     * @param policy the policy
     */
    public void policy(final Policy<B> policy)
    {
        bind(policy);
        logPolicy();
    }

    private void bind(final Policy<B> policy)
    {
        Objects.requireNonNull(policy, "policy");
        log.monitorVars(policy.monitorVars());
        policy.registerLogVars(sink);
        this.policy = policy;
    }

    private void logPolicy()
    {
        if (cfg.getBoolean("log_policy"))
        {
            info(policy.info());
        }
    }

    /**
     * One training call, DI-engine's {@code train(data, envstep)}: {@code before_iter} hooks, the policy's update,
     * then per update {@code train_time}, {@code lastIter + 1}, the {@code after_iter} hooks and the buffers cleared.
     *
     * @param data    the batch
     * @param envstep the collector env step this batch was collected at (-1 if unknown)
     * @throws IllegalStateException         if no policy is set
     * @throws org.ding4j.hook.HookException naming a hook that failed
     */
    public void train(final B data, final long envstep)
    {
        final Policy<B> policy = this.policy;
        if (null == policy)
        {
            throw new IllegalStateException("please set learner policy before train()");
        }
        collectorEnvstep = envstep;
        try
        {
            beginUpdate();
            policy.forward(data, sink);
        }
        catch (final RuntimeException | Error e)
        {
            // The next update must not see this one's vars; endUpdate clears them itself, also when a hook throws.
            buffer.clear();
            throw e;
        }
        endUpdate();
    }

    /**
     * {@link #train(Object, long)} with no env step.
     *
     * @param data the batch
     */
    public void train(final B data)
    {
        train(data, -1);
    }

    private void beginUpdate()
    {
        hooks.call(HookPosition.BEFORE_ITER, context);
        updateStart = System.nanoTime();
    }

    private void endUpdate()
    {
        final long elapsed = System.nanoTime() - updateStart;
        latency.recordTrainNs(elapsed);
        scalar.put(trainTimeIndex, elapsed * 1e-9);
        lastIter.add(1);
        try
        {
            hooks.call(HookPosition.AFTER_ITER, context);
        }
        finally
        {
            buffer.clear();
        }
    }

    /**
     * The one training lifecycle: {@code before_run} hooks; then up to {@code train_iterations} times the loop's
     * {@code prepare}, the stop vote (across ranks when distributed) and its {@code update}; {@code after_run} hooks
     * in {@code finally}. SIGINT/SIGTERM let the update in flight finish and save {@link #INTERRUPT_CHECKPOINT}
     * (rank 0); a failure saves {@link #EXCEPTION_CHECKPOINT}, is logged, tells the peers and is rethrown.
     * {@link #stop()} and {@link #close()} end it after the update in flight.
     *
     * @param loop what to do per update
     * @return how it ended
     * @throws IllegalStateException if already running or closed
     */
    public RunOutcome run(final TrainingLoop loop)
    {
        Objects.requireNonNull(loop, "loop");
        learnerDone = false;
        final RunOutcome outcome = runner.run(loop, cfg.getLong("train_iterations"));
        learnerDone = RunOutcome.INTERRUPTED != outcome;
        return outcome;
    }

    /**
     * Parallel mode, DI-engine's {@code start()}: {@link #run} over the data loader, each batch's wait recorded
     * as {@code data_time}; the loop ends when the source runs dry, after {@code train_iterations}, or on
     * {@link #stop()} / {@link #close()} ({@link #learnerDone()} is then true).
     *
     * @return how it ended
     * @throws IllegalStateException if already running, closed, or no data loader was set up
     */
    public RunOutcome start()
    {
        final AsyncDataLoader<B> loader = dataloader;
        if (null == loader)
        {
            throw new IllegalStateException("start() needs a data loader: set dataSource(...) and call setupDataloader()");
        }
        // Wake-ups before this run (a stop() that ended the last one) are not this run's.
        final long wakeUps = loader.wakeUps();
        return run(new TrainingLoop()
        {
            private B batch;

            @Override
            public boolean prepare()
            {
                final long waitStart = System.nanoTime();
                batch = loader.next(wakeUps);
                final long waited = System.nanoTime() - waitStart;
                latency.recordDataNs(waited);
                scalar.put(dataTimeIndex, waited * 1e-9);
                return null != batch;
            }

            @Override
            public void update()
            {
                // The collector side sets the env step (collectorEnvstep(long)) as it goes; keep it.
                train(batch, collectorEnvstep);
            }
        });
    }

    /**
     * Rank 0 saves {@link #INTERRUPT_CHECKPOINT} (the policy state with the current counters) and logs it.
     *
     * @throws IOException if the write fails (an older file of that name stays intact)
     */
    void saveInterruptCheckpoint() throws IOException
    {
        if (0 == rank)
        {
            info("stop signal: saved " + checkpoints.save(INTERRUPT_CHECKPOINT) + " after " + lastIter.val()
                + " updates");
        }
    }

    void saveQuietly(final String fileName, final Throwable failure)
    {
        if (0 != rank || null == policy)
        {
            return;
        }
        try
        {
            info("saved " + checkpoints.save(fileName) + " after " + lastIter.val() + " updates");
        }
        catch (final Exception | Error e)
        {
            failure.addSuppressed(e);
        }
    }

    /**
     * Builds the async data loader from the policy's {@code batchSize()} and {@code device()} and
     * {@code dataloader.chunk_size} (default: the batch size) and {@code dataloader.num_workers}. Batches reach the
     * device through the transfer given with the data source, or else {@link DeviceTransfer#forDevice(String)} of
     * the policy's device.
     *
     * @throws IllegalStateException    if no policy or no data source is set
     * @throws IllegalArgumentException if the policy's device is not one libtorch can use here
     */
    public void setupDataloader()
    {
        if (null == policy || null == dataSource)
        {
            throw new IllegalStateException("setupDataloader() needs a policy and a dataSource(...)");
        }
        final int batchSize = policy.batchSize();
        final Config loaderCfg = cfg.child("dataloader");
        final int chunkSize = null == loaderCfg.get("chunk_size") ? batchSize : loaderCfg.getInt("chunk_size");
        final AsyncDataLoader<B> loader = new AsyncDataLoader<>(dataSource, batchSize,
            null != deviceTransfer ? deviceTransfer : DeviceTransfer.forDevice(policy.device()), chunkSize,
            loaderCfg.getInt("num_workers"));
        dataloader = loader;
        runner.wakeUp(loader::wakeUp);
    }

    /**
     * DI-engine's {@code get_data}: where the data loader takes batches from in parallel mode.
     *
     * @param source the source
     */
    public void dataSource(final DataSource<B> source)
    {
        this.dataSource = Objects.requireNonNull(source, "source");
        this.deviceTransfer = null;
    }

    /**
     * The data source with its own device transfer, for batch types that {@link DeviceTransfer#forDevice(String)}
     * cannot walk (e.g. a preallocated batch object whose tensors the transfer refills on the device).
     *
     * @param source   the source
     * @param toDevice moves each batch to the policy's device, on the loader's thread
     */
    public void dataSource(final DataSource<B> source, final DeviceTransfer<B> toDevice)
    {
        this.dataSource = Objects.requireNonNull(source, "source");
        this.deviceTransfer = Objects.requireNonNull(toDevice, "toDevice");
    }

    /**
     * Makes this learner one rank of a data-parallel job: {@code log_reduce} averages its log values through the
     * group, and {@link #run} votes with the other ranks before each update. The caller owns (and closes) it.
     *
     * @param training the rank's process group wiring
     */
    public void distributed(final DistTraining training)
    {
        logReducer(training.logReducer());
        stopVote(training);
    }

    /**
     * Makes {@link #run} agree with the other ranks before each update whether to stop; null for local decisions,
     * the single-process default.
     *
     * @param vote the vote, or null
     */
    public void stopVote(final StopVote vote)
    {
        runner.vote(vote);
    }

    /**
     * Asks a running {@link #run} to return after the update in flight, from any thread; it then runs the
     * {@code after_run} hooks as usual. Unlike {@link #close()} it leaves the hooks and writers open.
     */
    public void stop()
    {
        runner.requestEnd();
    }

    /**
     * Closes the learner: stops the loader, closes the hooks (log_show writes its pending reports), the TensorBoard
     * writer and the text log. While {@link #run} runs, the loop does this itself after its update in flight and its
     * {@code after_run} hooks: from another thread close waits for that, from a hook on the loop's thread it returns
     * at once. Every resource is closed even when one fails; closing twice is harmless.
     *
     * @throws RuntimeException the first failure (a hook's as a {@link org.ding4j.hook.HookException} naming it),
     *                          the others suppressed
     */
    @Override
    public void close()
    {
        runner.close();
    }

    private void closeResources()
    {
        RuntimeException failure = null;
        if (null != dataloader)
        {
            failure = closeOne(failure, null, dataloader);
        }
        for (final LearnerHook hook : hooks.all())
        {
            failure = closeOne(failure, hook, hook::close);
        }
        failure = closeOne(failure, null, log);
        if (null != failure)
        {
            throw failure;
        }
    }

    /** Closes one resource; the first failure is kept, later ones are suppressed into it. */
    private static RuntimeException closeOne(final RuntimeException failure, final LearnerHook hook,
        final AutoCloseable resource)
    {
        try
        {
            resource.close();
            return failure;
        }
        catch (final Exception | Error e)
        {
            final RuntimeException wrapped = null != hook ? new HookException(hook, e)
                : e instanceof RuntimeException re ? re : new IllegalStateException("closing the learner: " + e, e);
            if (null == failure)
            {
                return wrapped;
            }
            failure.addSuppressed(wrapped);
            return failure;
        }
    }

    /**
     * Runs the {@code save_ckpt_after_run} hook with this checkpoint name, then clears the name.
     *
     * @param name checkpoint file name (e.g. {@code ckpt_best.pth.tar}); null keeps the iteration name
     * @throws IllegalStateException if that hook is not registered
     */
    public void saveCheckpoint(final String name)
    {
        final LearnerHook hook = hooks.find(HookPosition.AFTER_RUN, "save_ckpt_after_run");
        if (null == hook)
        {
            throw new IllegalStateException("saveCheckpoint needs the save_ckpt_after_run hook "
                + "(learner.hook.save_ckpt_after_run: true)");
        }
        if (null != name)
        {
            checkpoints.nameOverride(name);
        }
        try
        {
            Hooks.call(hook, context);
        }
        finally
        {
            checkpoints.nameOverride(null);
        }
    }

    /**
     * Calls the hooks at one position (DI-engine's {@code call_hook}).
     *
     * @param position where
     * @throws org.ding4j.hook.HookException naming a hook that failed
     */
    public void callHook(final HookPosition position)
    {
        hooks.call(position, context);
    }

    /**
     * Adds a hook (DI-engine's {@code register_hook}).
     *
     * @param hook the hook
     */
    public void registerHook(final LearnerHook hook)
    {
        hooks.add(hook);
    }

    /** @return {@code {learner_step, priority_info, learner_done}}; allocates a copy of the priorities */
    public LearnInfo learnInfo()
    {
        return new LearnInfo(lastIter.val(), priorities.count() < 0 ? null : PriorityInfo.copyOf(priorities),
            learnerDone);
    }

    /**
     * @return the last reported priorities, refilled in place by each update that reports them (count -1 before
     *         the first): the allocation-free form of {@code learnInfo().priorityInfo()}
     */
    public PriorityFeedback priorities()
    {
        return priorities;
    }

    /**
     * Logs at INFO as {@code [RANK{r}]: s} through SLF4J and into the text log (see {@link LearnerLog#info}).
     *
     * @param s the message (read before this returns)
     */
    public void info(final CharSequence s)
    {
        log.info(s);
    }

    /**
     * Logs at DEBUG as {@code [RANK{r}]: s} (when DEBUG is on).
     *
     * @param s the message
     */
    public void debug(final String s)
    {
        log.debug(s);
    }

    Policy<B> requirePolicy()
    {
        if (null == policy)
        {
            throw new IllegalStateException("learner " + instanceName + " has no policy");
        }
        return policy;
    }

    /** @return the learner's logs: buffers, monitor, TensorBoard writer, latency, text log */
    public LearnerLog log()
    {
        return log;
    }

    /** @return the learner's checkpoints (folder, name override, format, save and load) */
    public LearnerCheckpoints checkpoints()
    {
        return checkpoints;
    }

    /** @return {@code ./{exp}/log/{instance}/{instance}_logger.txt}, where this learner's text log belongs */
    public Path logFile()
    {
        return log.file();
    }

    /** @return the completed-update counter */
    public CountVar lastIter()
    {
        return lastIter;
    }

    /** @return completed updates */
    public long trainIter()
    {
        return lastIter.val();
    }

    /** @return this process's rank */
    public int rank()
    {
        return rank;
    }

    /** @return the world size */
    public int worldSize()
    {
        return worldSize;
    }

    /** @return the policy, or null */
    public Policy<B> policy()
    {
        return policy;
    }

    /** @return the tick monitor on monitoring ranks (after a policy is set), else null */
    public TickMonitor monitor()
    {
        return log.monitor();
    }

    /** @return the log buffers */
    public LogBuffer logBuffer()
    {
        return buffer;
    }

    /** @return train_time and data_time latency recorders (percentiles per log_show interval and in total) */
    public LearnerLatency latency()
    {
        return latency;
    }

    /** @return the text logger */
    public Logger logger()
    {
        return log.logger();
    }

    /** @return the summary writer on monitoring ranks, or null */
    public SummaryWriter tbLogger()
    {
        return log.tbLogger();
    }

    /** @return the checkpoint name the save hook uses instead of the iteration name, or null */
    public String ckptName()
    {
        return checkpoints.nameOverride();
    }

    /** @param name the checkpoint name for the next save, or null */
    public void ckptName(final String name)
    {
        checkpoints.nameOverride(name);
    }

    /** @return the experiment name (its folder) */
    public String expName()
    {
        return expName;
    }

    /** @return the instance name */
    public String instanceName()
    {
        return instanceName;
    }

    /** @return the collector env step of the last update (0 before the first, -1 if the caller did not know it) */
    public long collectorEnvstep()
    {
        return collectorEnvstep;
    }

    /** @param envstep the collector env step */
    public void collectorEnvstep(final long envstep)
    {
        this.collectorEnvstep = envstep;
    }

    /** @return the effective (merged) learner config */
    public Config config()
    {
        return cfg;
    }

    /** @return the hooks */
    public Hooks hooks()
    {
        return hooks;
    }

    /** @return {@code ./{exp}/ckpt}, or {@code ./{exp}/ckpt_{instance}} when the instance is not {@code learner} */
    public Path checkpointDir()
    {
        return checkpoints.dir();
    }

    /** @param io how checkpoints are read and written */
    public void checkpointIO(final CheckpointIO io)
    {
        checkpoints.io(io);
    }

    /** @param reducer averages log values across ranks */
    public void logReducer(final LogReducer reducer)
    {
        this.logReducer = Objects.requireNonNull(reducer, "reducer");
    }

    /** @return whether the last run ended normally (its iterations, the data, or {@code stop()/close()}) */
    public boolean learnerDone()
    {
        return learnerDone;
    }

    /** What hooks see: counters, rank, logs, checkpoints, the log reducer; not the learner. */
    private final class Context implements HookContext
    {
        @Override
        public long lastIter()
        {
            return lastIter.val();
        }

        @Override
        public long collectorEnvstep()
        {
            return collectorEnvstep;
        }

        @Override
        public int rank()
        {
            return rank;
        }

        @Override
        public int worldSize()
        {
            return worldSize;
        }

        @Override
        public String instanceName()
        {
            return instanceName;
        }

        @Override
        public LearnerLog log()
        {
            return log;
        }

        @Override
        public Checkpoints checkpoints()
        {
            return checkpoints;
        }

        @Override
        public LogReducer logReducer()
        {
            if (null == logReducer)
            {
                throw new IllegalStateException("world size " + worldSize + " needs a log reducer: call "
                    + "learner.distributed(...) or logReducer(...) with the process group's reducer");
            }
            return logReducer;
        }
    }

    /** The policy's sink: the {@code scalar} buffer by index, map-style values routed, priorities copied. */
    private final class Sink implements LogSink
    {
        @Override
        public int register(final String key)
        {
            return scalar.register(key);
        }

        @Override
        public void put(final int index, final double value)
        {
            scalar.put(index, value);
        }

        @Override
        public void value(final String key, final Object value)
        {
            buffer.route(key, value);
        }

        @Override
        public void priority(final double[] values, final int valueCount, final int[] slots, final long[] ids,
            final int itemCount)
        {
            priorities.set(values, valueCount, slots, ids, itemCount);
        }

        @Override
        public void nextUpdate()
        {
            endUpdate();
            beginUpdate();
        }
    }
}
