package org.ding4j.learner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.checkpoint.CheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.config.ConfigSchema;
import org.ding4j.config.ValueRule;
import org.ding4j.data.AsyncDataLoader;
import org.ding4j.data.DataSource;
import org.ding4j.data.DeviceTransfer;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.Hooks;
import org.ding4j.hook.LearnerHook;
import org.ding4j.hook.LogReducer;
import org.ding4j.hook.SaveCkptHook;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.LogBuffer;
import org.ding4j.log.ScalarDict;
import org.ding4j.log.SummaryWriter;
import org.ding4j.log.TensorBoardWriter;
import org.ding4j.log.TextLogFile;
import org.ding4j.log.TickMonitor;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.policy.SinkPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DI-engine's {@code BaseLearner}: owns the training side of an RL job. It drives a {@link Policy}'s updates,
 * dispatches hooks at {@code before_run / before_iter / after_iter / after_run}, keeps the log buffer and the tick
 * monitor, and writes checkpoints.
 * <p>
 * Threads: {@link #train}, {@link #start} and every hook run on one training thread; {@link #close()} may be called
 * from any thread (it stops {@code start()} after the update in flight). Not otherwise thread-safe.
 * <p>
 * Deliberate differences from DI-engine: {@link #lastIter()} counts completed updates (it is incremented before
 * the {@code after_iter} hooks, so {@code iteration_N} holds exactly N updates and a resume continues with update
 * N+1); {@code train_time} of an update is in the buffer before its {@code after_iter} hooks run (for a list of k
 * updates, each gets 1/k of the call's time); {@code start()} saves {@code ckpt_exception.pth.tar} and rethrows
 * when training fails; SIGINT/SIGTERM during {@code start()} finish the update in flight, save
 * {@code ckpt_interrupt.pth.tar} and return.
 */
public class BaseLearner implements AutoCloseable
{
    /** File name of the checkpoint saved when {@code start()} fails. */
    public static final String EXCEPTION_CHECKPOINT = "ckpt_exception.pth.tar";
    /** File name of the checkpoint saved when {@code start()} is stopped by SIGINT or SIGTERM. */
    public static final String INTERRUPT_CHECKPOINT = "ckpt_interrupt.pth.tar";
    /** Monitor window in ticks, as DI-engine's learner. */
    public static final long MONITOR_EXPIRE = 10;

    private static final ConfigSchema SCHEMA = ConfigSchema.builder("learner", Config.of(defaults()))
        .rule("train_iterations", ValueRule.POSITIVE_INTEGER)
        .rule("dataloader.num_workers", ValueRule.NON_NEGATIVE_INTEGER)
        .rule("dataloader.chunk_size", ValueRule.POSITIVE_INTEGER)
        .rule("hook.log_show_after_iter", ValueRule.POSITIVE_INTEGER)
        .rule("hook.save_ckpt_after_iter", ValueRule.POSITIVE_INTEGER)
        .rule("type", ValueRule.NON_EMPTY_STRING)
        .open("hook")
        .build();

    private final Config cfg;
    private final String expName;
    private final String instanceName;
    private final int rank;
    private final int worldSize;
    private final boolean onlyMonitorRank0;
    private final Logger logger;
    private final TextLogFile logFile;
    private final SummaryWriter tbLogger;
    private final LogBuffer logBuffer = new LogBuffer();
    private final LearnerLatency latency = new LearnerLatency();
    private final Hooks hooks;
    private final CountVar lastIter = new CountVar(0);
    private final Sink sink = new Sink();
    private final int trainTimeIndex;
    private final int dataTimeIndex;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    private Policy policy;
    private TickMonitor monitor;
    private CheckpointIO checkpointIO = new TorchCheckpointIO();
    private LogReducer logReducer;
    private DataSource<?> dataSource;
    private DeviceTransfer<?> deviceTransfer;
    private AsyncDataLoader<?> dataloader;
    private volatile long collectorEnvstep;
    private String ckptName;
    private PriorityInfo priorityInfo;
    private boolean learnerDone;
    private volatile boolean endFlag;
    private StopVote stopVote;
    private volatile boolean stopSignalled;

    /**
     * Builds a learner.
     *
     * @param cfg          the user's learner config, merged over {@link #defaultConfig()} (null: the defaults)
     * @param policy       the policy, or null to set it later
     * @param tbLogger     where log_show writes scalars and histograms on monitoring ranks, or null for a
     *                     {@link TensorBoardWriter} in {@code ./{exp}/log/{instance}/{instance}_tb_logger/}
     * @param distInfo     rank and world size, or null to read {@code RANK}/{@code WORLD_SIZE}
     * @param expName      experiment folder (relative to the working directory, or absolute)
     * @param instanceName the learner's name, unique in the experiment
     * @throws org.ding4j.config.ConfigException naming the first bad config key
     * @throws IllegalStateException             if the effective config cannot be written
     */
    public BaseLearner(
        final Config cfg, final Policy policy, final SummaryWriter tbLogger, final DistInfo distInfo,
        final String expName, final String instanceName)
    {
        final DistInfo dist = null != distInfo ? distInfo : DistInfo.fromEnvironment(System.getenv());
        Config effective = SCHEMA.apply(cfg);
        if (dist.worldSize() > 1)
        {
            effective = effective.with("hook.log_reduce_after_iter", true);
        }
        this.cfg = effective;
        this.expName = Objects.requireNonNull(expName, "expName");
        this.instanceName = Objects.requireNonNull(instanceName, "instanceName");
        this.rank = dist.rank();
        this.worldSize = dist.worldSize();
        // A multitask pipeline needs a monitor on every rank, whatever only_monitor_rank0 says.
        this.onlyMonitorRank0 = effective.getBoolean("only_monitor_rank0")
            && !effective.getBoolean("is_multitask_pipeline");
        this.logger = LoggerFactory.getLogger("ding4j." + instanceName);
        this.logReducer = 1 == worldSize ? LogReducer.IDENTITY : null;
        this.hooks = HookRegistry.build(effective.child("hook"), "learner.hook");
        final ScalarDict scalar = logBuffer.scalar();
        this.trainTimeIndex = scalar.register("train_time");
        this.dataTimeIndex = scalar.register("data_time");
        if (0 == rank)
        {
            writeEffectiveConfig();
        }
        // Ranks share the experiment folder: each writes its own text log (rank 0 keeps DI-engine's name).
        this.logFile = new TextLogFile(Path.of(expName, "log", instanceName,
            instanceName + (0 == rank ? "" : "_rank" + rank) + "_logger.txt"), instanceName, "[RANK" + rank + "]: ");
        // Last: the config is valid by now, so no writer thread is left behind by a failed construction.
        this.tbLogger = isMonitoring() ? (null != tbLogger ? tbLogger : defaultTensorBoard()) : null;
        if (null != policy)
        {
            policy(policy);
        }
    }

    /**
     * A single-process learner named {@code learner} in {@code default_experiment}.
     *
     * @param cfg    the user's learner config
     * @param policy the policy, or null
     */
    public BaseLearner(final Config cfg, final Policy policy)
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
        final Config effective = SCHEMA.apply(cfg);
        HookRegistry.build(effective.child("hook"), "learner.hook");
        return effective;
    }

    /** @return the learner's defaults (SPEC section 1), as a deep immutable tree */
    public static Config defaultConfig()
    {
        return SCHEMA.defaults();
    }

    private static Map<String, Object> defaults()
    {
        final Map<String, Object> hook = new LinkedHashMap<>();
        hook.put("load_ckpt_before_run", "");
        hook.put("log_show_after_iter", 100L);
        hook.put("save_ckpt_after_iter", 10000L);
        hook.put("save_ckpt_after_run", true);
        final Map<String, Object> dataloader = new LinkedHashMap<>();
        dataloader.put("num_workers", 0L);
        dataloader.put("chunk_size", null);
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("type", "base");
        root.put("import_names", List.of());
        root.put("train_iterations", 1_000_000_000L);
        root.put("dataloader", dataloader);
        root.put("log_policy", true);
        root.put("is_multitask_pipeline", false);
        root.put("only_monitor_rank0", true);
        root.put("hook", hook);
        return root;
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
            throw new IllegalStateException("cannot write the effective config to " + file, ex);
        }
    }

    /** DI-engine's default: {@code ./{exp}/log/{instance}/{instance}_tb_logger/}. */
    private SummaryWriter defaultTensorBoard()
    {
        final Path folder = Path.of(expName, "log", instanceName, instanceName + "_tb_logger");
        try
        {
            return new TensorBoardWriter(folder);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create the TensorBoard event file in " + folder, ex);
        }
    }

    private boolean isMonitoring()
    {
        return 0 == rank || !onlyMonitorRank0;
    }

    /**
     * Sets the policy: builds the monitor from its {@code monitorVars()} on monitoring ranks, registers a sink
     * policy's keys, and logs {@code policy.info()} when {@code log_policy} is on.
     *
     * @param policy the policy
     */
    public void policy(final Policy policy)
    {
        this.policy = Objects.requireNonNull(policy, "policy");
        if (isMonitoring())
        {
            monitor = new TickMonitor(policy.monitorVars(), MONITOR_EXPIRE);
        }
        if (policy instanceof SinkPolicy sinkPolicy)
        {
            sinkPolicy.registerLogVars(sink);
        }
        if (cfg.getBoolean("log_policy"))
        {
            info(policy.info());
        }
    }

    /**
     * One training call, DI-engine's {@code train(data, envstep, policy_kwargs)}.
     *
     * @param data   the batch
     * @param envstep the collector env step this batch was collected at (-1 if unknown)
     * @param kwargs extra policy arguments (null: none)
     * @return the policy's log vars (null for a {@link SinkPolicy})
     * @throws IllegalStateException                 if no policy is set
     * @throws IllegalArgumentException              if the policy returns something other than a map or a list of maps
     * @throws org.ding4j.hook.HookException naming a hook that failed
     */
    public Object train(final Object data, final long envstep, final Map<String, Object> kwargs)
    {
        final Policy policy = this.policy;
        if (null == policy)
        {
            throw new IllegalStateException("please set learner policy before train()");
        }
        final Map<String, Object> args = null == kwargs ? Collections.emptyMap() : kwargs;
        hooks.call(HookPosition.BEFORE_ITER, this);
        if (policy instanceof SinkPolicy sinkPolicy)
        {
            final long start = System.nanoTime();
            sink.priorityCount = -1;
            sinkPolicy.forward(data, args, sink);
            final long elapsed = System.nanoTime() - start;
            latency.recordTrainNs(elapsed);
            logBuffer.scalar().put(trainTimeIndex, elapsed * 1e-9);
            if (sink.priorityCount >= 0)
            {
                sink.pendingData = data;
            }
            collectorEnvstep = envstep;
            lastIter.add(1);
            hooks.call(HookPosition.AFTER_ITER, this);
            return null;
        }
        final long start = System.nanoTime();
        final Object out = policy.forward(data, args);
        final long elapsed = System.nanoTime() - start;
        latency.recordTrainNs(elapsed);
        final double seconds = elapsed * 1e-9;
        final List<Map<String, Object>> updates = extractPriority(updatesOf(out), data);
        collectorEnvstep = envstep;
        final double share = seconds / Math.max(1, updates.size());
        for (final Map<String, Object> vars : updates)
        {
            logBuffer.scalar().put(trainTimeIndex, share);
            for (final Map.Entry<String, Object> entry : vars.entrySet())
            {
                logBuffer.route(entry.getKey(), entry.getValue());
            }
            lastIter.add(1);
            hooks.call(HookPosition.AFTER_ITER, this);
        }
        return out;
    }

    /**
     * {@link #train(Object, long, Map)} with no env step and no kwargs.
     *
     * @param data the batch
     * @return the policy's log vars
     */
    public Object train(final Object data)
    {
        return train(data, -1, null);
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> updatesOf(final Object out)
    {
        if (out instanceof Map<?, ?> map)
        {
            return List.of((Map<String, Object>)map);
        }
        if (out instanceof List<?> list)
        {
            for (final Object element : list)
            {
                if (!(element instanceof Map))
                {
                    throw new IllegalArgumentException("policy.forward returned a list holding "
                        + (null == element ? "null" : element.getClass().getName()) + "; expected maps of log vars");
                }
            }
            return (List<Map<String, Object>>)list;
        }
        throw new IllegalArgumentException("policy.forward returned " + (null == out ? "null" : out.getClass().getName())
            + "; expected a Map of log vars or a List of them");
    }

    /** Takes a {@code priority} entry out of the last update's vars (into a copy: the policy's map stays as it is). */
    private List<Map<String, Object>> extractPriority(final List<Map<String, Object>> updates, final Object data)
    {
        if (updates.isEmpty() || !updates.get(updates.size() - 1).containsKey("priority"))
        {
            return updates;
        }
        final Map<String, Object> rest = new LinkedHashMap<>(updates.get(updates.size() - 1));
        final Object priority = rest.remove("priority");
        priorityInfo = new PriorityInfo(priority, ids(data, "replay_buffer_idx"), ids(data, "replay_unique_id"));
        final List<Map<String, Object>> copy = new ArrayList<>(updates);
        copy.set(copy.size() - 1, rest);
        return copy;
    }

    private static List<Object> ids(final Object data, final String key)
    {
        final List<Object> ids = new ArrayList<>();
        if (data instanceof ReplaySample sample)
        {
            final boolean unique = "replay_unique_id".equals(key);
            for (int i = 0; i < sample.size(); i++)
            {
                ids.add(unique ? (Object)sample.uniqueId(i) : (Object)sample.bufferIndex(i));
            }
        }
        else if (data instanceof List<?> items)
        {
            for (final Object item : items)
            {
                ids.add(item instanceof Map<?, ?> map ? map.get(key) : null);
            }
        }
        return ids;
    }

    /**
     * Parallel mode: {@code before_run} hooks, then up to {@code train_iterations} times take the next batch from
     * the data loader (its wait recorded as {@code data_time}) and train it, until {@link #close()}; then
     * {@code learnerDone = true} and the {@code after_run} hooks. A failure saves {@link #EXCEPTION_CHECKPOINT},
     * is logged, runs the {@code after_run} hooks and is rethrown. SIGINT/SIGTERM let the update in flight finish,
     * save {@link #INTERRUPT_CHECKPOINT} and return.
     *
     * @throws IllegalStateException if already running, or no data loader was set up
     */
    public void start()
    {
        if (null == dataloader)
        {
            throw new IllegalStateException("start() needs a data loader: set dataSource(...) and call setupDataloader()");
        }
        if (!running.compareAndSet(false, true))
        {
            throw new IllegalStateException("learner " + instanceName + " is already running");
        }
        endFlag = false;
        learnerDone = false;
        stopSignalled = false;
        final SignalStop signals = SignalStop.install(this::onSignal);
        Throwable failure = null;
        try
        {
            hooks.call(HookPosition.BEFORE_RUN, this);
            runLoop();
        }
        catch (final Throwable t)
        {
            failure = t;
            logger.error("[RANK{}]: training failed at iteration {}", rank, lastIter.val(), t);
            logFile.write("ERROR", "training failed at iteration " + lastIter.val() + ": " + t);
            saveQuietly(EXCEPTION_CHECKPOINT, t);
            if (null != stopVote)
            {
                stopVote.failed(t);
            }
        }
        finally
        {
            signals.restore();
            try
            {
                hooks.call(HookPosition.AFTER_RUN, this);
            }
            catch (final RuntimeException | Error e)
            {
                if (null == failure)
                {
                    failure = e;
                }
                else
                {
                    failure.addSuppressed(e);
                }
            }
            running.set(false);
        }
        if (failure instanceof RuntimeException re)
        {
            throw re;
        }
        if (failure instanceof Error error)
        {
            throw error;
        }
    }

    private void runLoop() throws IOException
    {
        final long iterations = cfg.getLong("train_iterations");
        final AsyncDataLoader<?> loader = dataloader;
        for (long i = 0; i < iterations; i++)
        {
            final long waitStart = System.nanoTime();
            final Object data = loader.next();
            if (null != stopVote)
            {
                // Every rank votes before each update, so all stop before the same one (its collectives included).
                final int agreed = stopVote.vote(stopSignalled ? StopVote.SIGNAL
                    : endFlag || null == data ? StopVote.END : StopVote.CONTINUE);
                if (StopVote.SIGNAL == agreed)
                {
                    stopSignalled = true;
                    break;
                }
                if (StopVote.END == agreed)
                {
                    return;
                }
            }
            else if (stopSignalled)
            {
                break;
            }
            else if (endFlag || null == data)
            {
                return;
            }
            final long waited = System.nanoTime() - waitStart;
            latency.recordDataNs(waited);
            logBuffer.scalar().put(dataTimeIndex, waited * 1e-9);
            // The collector side sets the env step (collectorEnvstep(long)) as it goes; keep it, do not reset it.
            train(data, collectorEnvstep, null);
            if (stopSignalled && null == stopVote)
            {
                break;
            }
        }
        if (stopSignalled)
        {
            saveInterruptCheckpoint();
            return;
        }
        learnerDone = true;
    }

    /**
     * What a training loop does once its ranks agreed to stop on a signal: rank 0 saves
     * {@link #INTERRUPT_CHECKPOINT} (the policy state with the current counters) and logs it; other ranks do nothing.
     *
     * @throws IOException if the write fails (an older file of that name stays intact)
     */
    public void saveInterruptCheckpoint() throws IOException
    {
        if (0 == rank)
        {
            info("stop signal: saved " + SaveCkptHook.write(this, INTERRUPT_CHECKPOINT) + " after " + lastIter.val()
                + " updates");
        }
    }

    private void onSignal()
    {
        // Runs on the JVM's signal thread: set flags only; the training thread saves after the update in flight.
        stopSignalled = true;
        final AsyncDataLoader<?> loader = dataloader;
        if (null != loader)
        {
            loader.wakeUp();
        }
    }

    private void saveQuietly(final String fileName, final Throwable failure)
    {
        if (0 != rank || null == policy)
        {
            return;
        }
        try
        {
            info("saved " + SaveCkptHook.write(this, fileName) + " after " + lastIter.val() + " updates");
        }
        catch (final Exception | Error e)
        {
            failure.addSuppressed(e);
        }
    }

    /**
     * Builds the async data loader from the policy's {@code batch_size} and {@code device} attributes and
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
        final int batchSize = ((Number)policy.attribute("batch_size")).intValue();
        final Config loaderCfg = cfg.child("dataloader");
        final Object chunk = loaderCfg.get("chunk_size");
        final int chunkSize = null == chunk ? batchSize : loaderCfg.getInt("chunk_size");
        dataloader = loader(dataSource, null != deviceTransfer ? deviceTransfer
            : DeviceTransfer.forDevice(String.valueOf(policy.attribute("device"))), batchSize, chunkSize,
            loaderCfg.getInt("num_workers"));
    }

    @SuppressWarnings("unchecked")
    private static <T> AsyncDataLoader<T> loader(final DataSource<T> source, final DeviceTransfer<?> toDevice,
        final int batchSize, final int chunkSize, final int workers)
    {
        // dataSource(source, toDevice) pairs the two types; forDevice is generic over any batch type.
        return new AsyncDataLoader<>(source, batchSize, (DeviceTransfer<T>)toDevice, chunkSize, workers, null);
    }

    /**
     * DI-engine's {@code get_data}: where the data loader takes batches from in parallel mode.
     *
     * @param source the source
     */
    public void dataSource(final DataSource<?> source)
    {
        this.dataSource = Objects.requireNonNull(source, "source");
        this.deviceTransfer = null;
    }

    /**
     * The data source with its own device transfer, for batch types that {@link DeviceTransfer#forDevice(String)}
     * cannot walk (e.g. a preallocated batch object whose tensors the transfer refills on the device).
     *
     * @param <T>      the batch type
     * @param source   the source
     * @param toDevice moves each batch to the policy's device, on the loader's thread
     */
    public <T> void dataSource(final DataSource<T> source, final DeviceTransfer<T> toDevice)
    {
        this.dataSource = Objects.requireNonNull(source, "source");
        this.deviceTransfer = Objects.requireNonNull(toDevice, "toDevice");
    }

    /**
     * Makes {@code start()} agree with the other ranks before each update whether to stop (set by the distributed
     * setup, e.g. {@code org.ding4j.dist.DistTraining}); null for local decisions, the single-process default.
     *
     * @param vote the vote, or null
     */
    public void stopVote(final StopVote vote)
    {
        this.stopVote = vote;
    }

    /**
     * Asks a running {@code start()} to return after the update in flight, from any thread; it then runs the
     * {@code after_run} hooks as usual. Unlike {@link #close()} it leaves the hooks and writers open, so the
     * caller can still save and log before closing.
     */
    public void stop()
    {
        endFlag = true;
        if (null != dataloader)
        {
            dataloader.wakeUp();
        }
    }

    /**
     * Stops {@code start()} after the update in flight, stops the loader, closes the hooks (log_show writes its
     * pending reports), then flushes and closes the summary writer.
     */
    @Override
    public void close()
    {
        if (!closed.compareAndSet(false, true))
        {
            return;
        }
        endFlag = true;
        if (null != dataloader)
        {
            dataloader.close();
        }
        for (final LearnerHook hook : hooks.all())
        {
            hook.close();
        }
        if (null != tbLogger)
        {
            tbLogger.flush();
            tbLogger.close();
        }
        logFile.close();
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
            ckptName = name;
        }
        try
        {
            Hooks.call(hook, this);
        }
        finally
        {
            ckptName = null;
        }
    }

    /**
     * Calls the hooks at one position (DI-engine's {@code call_hook}); serial pipelines call {@code before_run}
     * and {@code after_run} themselves.
     *
     * @param position where
     * @throws org.ding4j.hook.HookException naming a hook that failed
     */
    public void callHook(final HookPosition position)
    {
        hooks.call(position, this);
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

    /** @return {@code {learner_step, priority_info, learner_done}} */
    public LearnInfo learnInfo()
    {
        if (null != sink.pendingData)
        {
            final double[] copy = java.util.Arrays.copyOf(sink.priorities, sink.priorityCount);
            priorityInfo = new PriorityInfo(copy, ids(sink.pendingData, "replay_buffer_idx"),
                ids(sink.pendingData, "replay_unique_id"));
            sink.pendingData = null;
        }
        return new LearnInfo(lastIter.val(), priorityInfo, learnerDone);
    }

    /**
     * Logs at INFO as {@code [RANK{r}]: s} through SLF4J and into {@link #logFile()}. The log file's copy allocates
     * nothing, so a caller may pass a reused builder; SLF4J gets its own copy only when its INFO level is on.
     *
     * @param s the message (read before this returns)
     */
    public void info(final CharSequence s)
    {
        if (logger.isInfoEnabled())
        {
            logger.info("[RANK{}]: {}", rank, s.toString());
        }
        logFile.write("INFO", s);
    }

    /**
     * Logs at DEBUG as {@code [RANK{r}]: s} through SLF4J (and into {@link #logFile()} when DEBUG is on).
     *
     * @param s the message
     */
    public void debug(final String s)
    {
        if (logger.isDebugEnabled())
        {
            logger.debug("[RANK{}]: {}", rank, s);
            logFile.write("DEBUG", s);
        }
    }

    /** @return {@code ./{exp}/log/{instance}/{instance}_logger.txt}, where this learner's text log belongs */
    public Path logFile()
    {
        return logFile.file();
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
    public Policy policy()
    {
        return policy;
    }

    /** @return the tick monitor on monitoring ranks (after a policy is set), else null */
    public TickMonitor monitor()
    {
        return monitor;
    }

    /** @return the log buffers */
    public LogBuffer logBuffer()
    {
        return logBuffer;
    }

    /** @return train_time and data_time latency recorders (percentiles per log_show interval and in total) */
    public LearnerLatency latency()
    {
        return latency;
    }

    /** @return the text logger */
    public Logger logger()
    {
        return logger;
    }

    /** @return the summary writer on monitoring ranks, or null */
    public SummaryWriter tbLogger()
    {
        return tbLogger;
    }

    /** @return the checkpoint name the save hook uses instead of the iteration name, or null */
    public String ckptName()
    {
        return ckptName;
    }

    /** @param name the checkpoint name for the next save, or null */
    public void ckptName(final String name)
    {
        this.ckptName = name;
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

    /** @return the collector env step of the last update */
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
        return Path.of(expName).resolve("learner".equals(instanceName) ? "ckpt" : "ckpt_" + instanceName);
    }

    /** @return how checkpoints are read and written */
    public CheckpointIO checkpointIO()
    {
        return checkpointIO;
    }

    /** @param io how checkpoints are read and written */
    public void checkpointIO(final CheckpointIO io)
    {
        this.checkpointIO = Objects.requireNonNull(io, "io");
    }

    /**
     * @return the log reducer ({@link LogReducer#IDENTITY} for one rank)
     * @throws IllegalStateException for world size > 1 when no backend was set
     */
    public LogReducer logReducer()
    {
        if (null == logReducer)
        {
            throw new IllegalStateException("world size " + worldSize + " needs a log reducer: call "
                + "logReducer(...) with the process group's reducer");
        }
        return logReducer;
    }

    /** @param reducer averages log values across ranks */
    public void logReducer(final LogReducer reducer)
    {
        this.logReducer = Objects.requireNonNull(reducer, "reducer");
    }

    /** @return whether {@code start()} finished its iterations */
    public boolean learnerDone()
    {
        return learnerDone;
    }

    /** The allocation-free log sink handed to a {@link SinkPolicy}: the {@code scalar} buffer by index. */
    private final class Sink implements LogSink
    {
        private double[] priorities = new double[0];
        private int priorityCount = -1;
        private Object pendingData;

        @Override
        public int register(final String key)
        {
            return logBuffer.scalar().register(key);
        }

        @Override
        public void put(final int index, final double value)
        {
            logBuffer.scalar().put(index, value);
        }

        @Override
        public void priority(final double[] values, final int count)
        {
            priorities = values;
            priorityCount = count;
        }
    }
}
