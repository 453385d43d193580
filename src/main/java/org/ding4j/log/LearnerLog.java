package org.ding4j.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;
import org.slf4j.MarkerFactory;

/**
 * Everything a learner logs through, owned by one learner: the log buffers an update writes into, the tick monitor
 * that averages them (monitoring ranks only), the TensorBoard writer (monitoring ranks only), the latency recorders,
 * and the text log ({@code ./{exp}/log/{instance}/{instance}_logger.txt} beside SLF4J). The learner opens the
 * files last in its construction, after everything that can be refused was checked. The buffers, monitor and latency belong to the training thread;
 * {@link #info} may be called from any thread (the report thread of {@code log_show} does).
 */
public final class LearnerLog implements AutoCloseable
{
    /** Monitor window in ticks, as DI-engine's learner. */
    public static final long MONITOR_EXPIRE = 10;
    /**
     * Marks the SLF4J events of {@link #rethrown}: failures the learner logs and then throws to whoever runs it. An
     * application that reports what its calls throw can deny the marker on its console (the command line's logback
     * configuration does, so a failure is one line there), and still gets every other error.
     */
    public static final Marker RETHROWN = MarkerFactory.getMarker("DING4J_RETHROWN");

    private final LogBuffer buffer = new LogBuffer();
    private final LearnerLatency latency = new LearnerLatency();
    private final String instanceName;
    private final int rank;
    private final boolean monitoring;
    private final Logger logger;
    private TextLogFile file;
    private SummaryWriter tbLogger;
    private TickMonitor monitor;
    private String[] monitorVars = new String[0];

    /**
     * The in-memory part; {@link #open} opens the files.
     *
     * @param instanceName the learner's name
     * @param rank         this process's rank (ranks other than 0 write {@code ..._rank{r}_logger.txt})
     * @param monitoring   whether this rank keeps a monitor and a TensorBoard writer
     */
    public LearnerLog(final String instanceName, final int rank, final boolean monitoring)
    {
        this.instanceName = instanceName;
        this.rank = rank;
        this.monitoring = monitoring;
        this.logger = LoggerFactory.getLogger("ding4j." + instanceName);
    }

    /**
     * Opens the text log and, on a monitoring rank, the TensorBoard writer. Until then {@link #info} goes to SLF4J
     * only.
     *
     * @param expName  experiment folder
     * @param tbLogger the writer to use, or null for a {@link TensorBoardWriter} in
     *                 {@code ./{exp}/log/{instance}/{instance}_tb_logger/}
     * @throws java.io.UncheckedIOException naming the file if a log cannot be opened
     * @throws IllegalStateException        if already open
     */
    public void open(final String expName, final SummaryWriter tbLogger)
    {
        if (null != file)
        {
            throw new IllegalStateException("learner log already open");
        }
        final TextLogFile text = new TextLogFile(Path.of(expName, "log", instanceName,
            instanceName + (0 == rank ? "" : "_rank" + rank) + "_logger.txt"), instanceName, "[RANK" + rank + "]: ");
        try
        {
            this.tbLogger = !monitoring ? null
                : null != tbLogger ? tbLogger : defaultTensorBoard(Path.of(expName, "log", instanceName,
                instanceName + "_tb_logger"));
        }
        catch (final RuntimeException ex)
        {
            text.close();
            throw ex;
        }
        this.file = text;
    }

    private static SummaryWriter defaultTensorBoard(final Path folder)
    {
        try
        {
            return new TensorBoardWriter(folder);
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException("cannot create the TensorBoard event file in " + folder, ex);
        }
    }

    /**
     * Builds the monitor for a policy's variables (on monitoring ranks).
     *
     * @param policyVars the policy's monitor vars
     */
    public void monitorVars(final List<String> policyVars)
    {
        Objects.requireNonNull(policyVars, "policyVars");
        monitorVars = policyVars.toArray(new String[0]);
        monitor = monitoring ? new TickMonitor(policyVars, MONITOR_EXPIRE) : null;
    }

    /** @return the policy's monitor vars, in its order (a shared array: do not change it) */
    public String[] monitorVars()
    {
        return monitorVars;
    }

    /**
     * Logs at INFO as {@code [RANK{r}]: s} through SLF4J and into the text log. The text log's copy allocates
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
        final TextLogFile file = this.file;
        if (null != file)
        {
            file.write("INFO", s);
        }
    }

    /**
     * Logs at DEBUG (SLF4J and the text log) when DEBUG is on.
     *
     * @param s the message
     */
    public void debug(final String s)
    {
        if (logger.isDebugEnabled())
        {
            logger.debug("[RANK{}]: {}", rank, s);
            if (null != file)
            {
                file.write("DEBUG", s);
            }
        }
    }

    /**
     * Logs an error with its cause (SLF4J with the stack, the text log with its whole trace).
     *
     * @param s     what failed
     * @param cause why
     */
    public void error(final String s, final Throwable cause)
    {
        // The cause on the line itself (a console that leaves traces out still names it), the trace after it.
        logger.error("[RANK{}]: {}: {}", rank, s, cause, cause);
        writeTrace(s, cause);
    }

    /**
     * {@link #error} for a failure that is thrown to whoever runs the learner once logged (a run's): the SLF4J event
     * carries the {@link #RETHROWN} marker.
     *
     * @param s     what failed
     * @param cause why, which the caller then throws
     */
    public void rethrown(final String s, final Throwable cause)
    {
        logger.error(RETHROWN, "[RANK{}]: {}: {}", rank, s, cause, cause);
        writeTrace(s, cause);
    }

    private void writeTrace(final String s, final Throwable cause)
    {
        if (null != file)
        {
            // The whole trace in the learner's own log file, where a one-line console message sends the reader.
            final java.io.StringWriter trace = new java.io.StringWriter();
            cause.printStackTrace(new java.io.PrintWriter(trace));
            file.write("ERROR", s + ": " + trace.toString().stripTrailing());
        }
    }

    /** @return the log buffers the current iteration writes into */
    public LogBuffer buffer()
    {
        return buffer;
    }

    /** @return the tick monitor on monitoring ranks once a policy is set, else null */
    public TickMonitor monitor()
    {
        return monitor;
    }

    /** @return the summary writer on monitoring ranks, or null */
    public SummaryWriter tbLogger()
    {
        return tbLogger;
    }

    /** @return train_time and data_time latency recorders */
    public LearnerLatency latency()
    {
        return latency;
    }

    /** @return the SLF4J logger ({@code ding4j.{instance}}) */
    public Logger logger()
    {
        return logger;
    }

    /** @return the text log's path, or null before {@link #open} */
    public Path file()
    {
        return null == file ? null : file.file();
    }

    /** Flushes and closes the summary writer, then the text log, which is closed even when the writer fails. */
    @Override
    public void close()
    {
        try
        {
            if (null != tbLogger)
            {
                try
                {
                    tbLogger.flush();
                }
                finally
                {
                    tbLogger.close();
                }
            }
        }
        finally
        {
            if (null != file)
            {
                file.close();
            }
        }
    }
}
