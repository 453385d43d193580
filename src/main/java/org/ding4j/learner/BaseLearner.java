package org.ding4j.learner;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.ding4j.config.Config;
import org.ding4j.data.AsyncDataLoader;
import org.ding4j.data.DataSource;
import org.ding4j.data.DeviceTransfer;
import org.ding4j.dist.DistInfo;
import org.ding4j.dist.DistTraining;
import org.ding4j.dist.StopVote;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.Hooks;
import org.ding4j.hook.LearnerHook;
import org.ding4j.hook.LogReducer;
import org.ding4j.internal.Closing;
import org.ding4j.internal.JvmFlags;
import org.ding4j.log.LearnerLog;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.SummaryWriter;
import org.ding4j.policy.Policy;
import org.ding4j.policy.PriorityFeedback;

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
    private final LearnerContext context = new LearnerContext(this);
    private final LearnerCheckpoints checkpoints;
    private final LearnerRunner runner = new LearnerRunner(this,
        () -> LearnerResources.closeAll(this.dataloader, hooks(), log(), this.closeWith));
    /** Closed after the learner's own resources, last added first (a JMX bean, a metrics binding). */
    private final List<AutoCloseable> closeWith = new CopyOnWriteArrayList<>();
    /**
     * The folder, instance and rank of every open learner of this process: a second learner there would write over
     * the first one's checkpoints and append to its logs (a pipeline's folder lock covers other processes).
     */
    private static final Set<Place> OPEN = ConcurrentHashMap.newKeySet();
    private final UpdateCycle cycle;

    private Policy<B> policy;
    private LogReducer logReducer;
    private DataSource<B> dataSource;
    private DeviceTransfer<B> deviceTransfer;
    private AsyncDataLoader<B> dataloader;
    private boolean learnerDone;

    /**
     * Builds a learner.
     *
     * @param cfg          the user's learner config, merged over {@link #defaultConfig()} (null: the defaults)
     * @param policy       the policy, or null to set it later
     * @param tbLogger     where log_show writes scalars and histograms on monitoring ranks, or null for a
     *                     TensorBoard writer in {@code ./{exp}/log/{instance}/{instance}_tb_logger/}; the learner
     *                     owns it and closes it with itself (or when this constructor fails)
     * @param distInfo     rank and world size, or null to read {@code RANK}/{@code WORLD_SIZE}
     * @param expName      experiment folder (relative to the working directory, or absolute)
     * @param instanceName the learner's name, unique in the experiment
     * @throws IllegalStateException             if the JVM lacks a flag ding4j needs (the message names it), the
     *                                           effective config cannot be written, or another open learner of
     *                                           this process has the same folder, instance name and rank (a
     *                                           subclass whose own constructor fails after this one returned
     *                                           closes it, or the place stays taken)
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
        this.cycle = new UpdateCycle(instanceName, hooks, context, lastIter, log);
        if (null != policy)
        {
            bind(policy);
        }
        // Last, once everything that can be refused has been checked: the files.
        final Place place = new Place(Path.of(expName).toAbsolutePath().normalize(), instanceName, rank);
        if (!OPEN.add(place))
        {
            throw new IllegalStateException("learner " + instanceName + " (rank " + rank + ") in "
                + place.folder() + ": another open learner of this process writes there "
                + "(the same exp_name, instance_name and rank), and each would overwrite the other's checkpoints and "
                + "logs: close it first, or give this one another exp_name or instance_name");
        }
        try
        {
            log.open(expName, tbLogger);
            if (0 == rank)
            {
                LearnerConfig.writeEffective(Config.empty().with("learner", this.cfg), Path.of(expName));
                checkpoints.removeStaleTemporaries();
            }
            if (null != policy)
            {
                logPolicy();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // The text log and TensorBoard files opened before the failure: the caller has no learner to close.
            Closing.afterFailure(List.of(log), ex);
            OPEN.remove(place);
            throw ex;
        }
        // Added first, so closed last: the place is free once everything that writes there is closed.
        closeWith.add(() -> OPEN.remove(place));
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

    /** @return the learner's defaults (DI-engine's BaseLearner config), as a deep immutable tree */
    public static Config defaultConfig()
    {
        return LearnerConfig.SCHEMA.defaults();
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
        policy.registerLogVars(cycle);
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
     * One training call, DI-engine's {@code train(data, envstep)}: what {@link #control()} asked for first (a pause,
     * a checkpoint), then {@code before_iter} hooks, the policy's update, then per update {@code train_time},
     * {@code lastIter + 1}, the {@code after_iter} hooks and the buffers cleared.
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
        runner.control().between();
        if (runner.closedToCaller())
        {
            // Closed (by another thread, or before this call): its logs and hooks are gone, so is its training. A
            // run()'s own update in flight goes on; the run closes after it.
            throw runner.closedError();
        }
        cycle.collectorEnvstep(envstep);
        try
        {
            cycle.beginCall();
            policy.forward(data, cycle);
        }
        catch (final RuntimeException | Error e)
        {
            // The next update must not see this one's vars; end() clears them itself, also when a hook throws.
            cycle.abort();
            throw e;
        }
        cycle.end();
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

    /**
     * The one training lifecycle: {@code before_run} hooks; then up to {@code train_iterations} times the loop's
     * {@code prepare}, the stop vote (across ranks when distributed) and its {@code update}; {@code after_run} hooks
     * in {@code finally}. SIGINT/SIGTERM, or an interrupt of the calling thread ({@code Thread.interrupt()},
     * {@code Future.cancel(true)}), let the update in flight finish and save {@link #INTERRUPT_CHECKPOINT} (rank 0),
     * and the run returns {@link RunOutcome#INTERRUPTED} with the thread's interrupt status set again; a failure
     * saves {@link #EXCEPTION_CHECKPOINT}, is logged, tells the peers and is rethrown.
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
     * as {@code data_time}; the loop ends after {@code train_iterations}, or on {@link #stop()} / {@link #close()}
     * ({@link #learnerDone()} is then true); a source that has no more data says so by having its owner call
     * {@link #stop()} (a null batch is refused as a failure of the source, named).
     *
     * @return how it ended
     * @throws IllegalStateException if already running, closed, or no data loader was set up
     */
    public RunOutcome start()
    {
        final AsyncDataLoader<B> loader = dataloader;
        if (null == loader)
        {
            throw new IllegalStateException(
                "start() needs a data loader: set dataSource(...) and call setupDataloader()");
        }
        return run(new LoaderLoop<>(this, cycle, loader));
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
        runner.requireOpen();
        if (null != dataloader)
        {
            // A second set-up replaces the first loader, whose threads would otherwise outlive the learner.
            dataloader.close();
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
     * {@code after_run} hooks as usual. A stop asked before a run gets going (from the thread that just started it)
     * ends that run at once; a run that took a stop leaves none for the next. Unlike {@link #close()} it leaves the
     * hooks and writers open.
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

    /**
     * Ties a resource to the learner's lifecycle: closed after the learner's own resources when it closes (last
     * added first), also when one of those fails. Integrations use it to unregister themselves.
     *
     * @param resource closes what belongs to this learner
     * @throws IllegalStateException if the learner is closed already (the resource would never be closed)
     */
    public void closeWith(final AutoCloseable resource)
    {
        Objects.requireNonNull(resource, "resource");
        runner.requireOpen();
        closeWith.add(0, resource);
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
     * @throws IllegalStateException if the learner is closed (the hook would never run)
     */
    public void registerHook(final LearnerHook hook)
    {
        runner.requireOpen();
        hooks.add(hook);
    }

    /** @return {@code {learner_step, priority_info, learner_done}}; allocates a copy of the priorities */
    public LearnInfo learnInfo()
    {
        final PriorityFeedback priorities = cycle.priorities();
        return new LearnInfo(lastIter.val(), priorities.count() < 0 ? null : PriorityInfo.copyOf(priorities),
            learnerDone);
    }

    /**
     * @return the last reported priorities, refilled in place by each update that reports them (count -1 before
     *         the first): the allocation-free form of {@code learnInfo().priorityInfo()}
     */
    public PriorityFeedback priorities()
    {
        return cycle.priorities();
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

    /**
     * The updates a multi-update call made beyond {@link #trainIter()}:
     * {@link org.ding4j.hook.HookContext#updatesAhead()}.
     */
    long updatesAhead()
    {
        return cycle.updatesAhead();
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

    /** @return the log buffers */
    public LogBuffer logBuffer()
    {
        return log.buffer();
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
        return cycle.collectorEnvstep();
    }

    /** @param envstep the collector env step */
    public void collectorEnvstep(final long envstep)
    {
        cycle.collectorEnvstep(envstep);
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

    /** @param reducer averages log values across ranks */
    public void logReducer(final LogReducer reducer)
    {
        this.logReducer = Objects.requireNonNull(reducer, "reducer");
    }

    /** @return the log reducer, or null while a distributed learner has none yet */
    LogReducer logReducerOrNull()
    {
        return logReducer;
    }

    /**
     * @return pause, resume and checkpoint-now requests, carried out by the training thread between updates (what
     *         the JMX bean drives)
     */
    public LearnerControl control()
    {
        return runner.control();
    }

    /** @return whether the last run ended normally (its iterations, the data, or {@code stop()/close()}) */
    public boolean learnerDone()
    {
        return learnerDone;
    }

    /** Where a learner writes: its folder (absolute, normalised), instance name and rank. */
    private record Place(Path folder, String instance, int rank)
    {
    }
}
