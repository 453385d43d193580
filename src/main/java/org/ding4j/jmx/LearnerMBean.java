package org.ding4j.jmx;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.ding4j.learner.BaseLearner;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.ScalarDict;

/**
 * The {@link LearnerMXBean} of one learner, registered as
 * {@code org.ding4j:type=Learner,experiment=<exp>,name=<instance>} and unregistered when the learner closes. Two
 * learners of one JVM differ in their experiment or instance names (as their folders do); a second registration of
 * the same names is refused.
 */
public final class LearnerMBean implements LearnerMXBean
{
    /** How long {@link #saveCheckpoint()} waits for the training thread. */
    public static final Duration SAVE_TIMEOUT = Duration.ofSeconds(30);

    private final BaseLearner<?> learner;
    private final ScalarDict scalar;
    private final LearnerLatency latency;

    private LearnerMBean(final BaseLearner<?> learner)
    {
        this.learner = learner;
        this.scalar = learner.logBuffer().scalar();
        this.latency = learner.log().latency();
    }

    /**
     * Registers a learner's bean with the platform MBean server, until the learner closes.
     *
     * @param learner the learner
     * @return the bean's name
     * @throws IllegalStateException naming the object name if it is taken (another learner of the same names)
     */
    public static ObjectName register(final BaseLearner<?> learner)
    {
        return register(learner, ManagementFactory.getPlatformMBeanServer());
    }

    /**
     * Registers a learner's bean with a server, until the learner closes.
     *
     * @param learner the learner
     * @param server  the MBean server
     * @return the bean's name
     * @throws IllegalStateException naming the object name if it is taken, or if the learner is closed
     */
    public static ObjectName register(final BaseLearner<?> learner, final MBeanServer server)
    {
        Objects.requireNonNull(server, "server");
        final ObjectName name = objectName(learner);
        // Set once this registration succeeded: a refused one (the name taken by another learner) must not unregister
        // that learner's bean when this learner closes.
        final java.util.concurrent.atomic.AtomicBoolean ours = new java.util.concurrent.atomic.AtomicBoolean();
        // Tied to the learner first: a closed one refuses, and nothing is left registered for good.
        learner.closeWith(() -> {
            if (ours.getAndSet(false) && server.isRegistered(name))
            {
                server.unregisterMBean(name);
            }
        });
        try
        {
            server.registerMBean(new LearnerMBean(learner), name);
            ours.set(true);
        }
        catch (final JMException ex)
        {
            throw new IllegalStateException("cannot register " + name + ": " + ex, ex);
        }
        return name;
    }

    /**
     * @param learner a learner
     * @return the object name its bean is registered under
     */
    public static ObjectName objectName(final BaseLearner<?> learner)
    {
        try
        {
            return new ObjectName("org.ding4j:type=Learner,experiment=" + ObjectName.quote(learner.expName())
                + ",name=" + ObjectName.quote(learner.instanceName()));
        }
        catch (final JMException ex)
        {
            throw new IllegalArgumentException("no JMX name for learner " + learner.instanceName() + ": " + ex, ex);
        }
    }

    @Override
    public String getExperiment()
    {
        return learner.expName();
    }

    @Override
    public String getInstanceName()
    {
        return learner.instanceName();
    }

    @Override
    public int getRank()
    {
        return learner.rank();
    }

    @Override
    public int getWorldSize()
    {
        return learner.worldSize();
    }

    @Override
    public long getUpdates()
    {
        return learner.trainIter();
    }

    @Override
    public long getEnvSteps()
    {
        return learner.collectorEnvstep();
    }

    @Override
    public Map<String, Double> getLastValues()
    {
        final Map<String, Double> values = new LinkedHashMap<>();
        for (int i = 0; i < scalar.keyCount(); i++)
        {
            if (scalar.wasWritten(i))
            {
                values.put(scalar.name(i), scalar.value(i));
            }
        }
        return values;
    }

    @Override
    public long getTrainTimeCount()
    {
        return latency.count("train_time");
    }

    @Override
    public long getTrainTimeP50Nanos()
    {
        return latency.percentile("train_time", 50);
    }

    @Override
    public long getTrainTimeP99Nanos()
    {
        return latency.percentile("train_time", 99);
    }

    @Override
    public long getTrainTimeP999Nanos()
    {
        return latency.percentile("train_time", 99.9);
    }

    @Override
    public long getDataTimeP50Nanos()
    {
        return latency.percentile("data_time", 50);
    }

    @Override
    public long getDataTimeP99Nanos()
    {
        return latency.percentile("data_time", 99);
    }

    @Override
    public long getDataTimeP999Nanos()
    {
        return latency.percentile("data_time", 99.9);
    }

    @Override
    public boolean isPaused()
    {
        return learner.control().paused();
    }

    @Override
    public boolean isWaiting()
    {
        return learner.control().waiting();
    }

    @Override
    public String saveCheckpoint() throws Exception
    {
        return learner.control().saveCheckpoint(SAVE_TIMEOUT).toString();
    }

    @Override
    public void pause()
    {
        learner.control().pause();
    }

    @Override
    public void resume()
    {
        learner.control().resume();
    }

    @Override
    public void stop()
    {
        learner.stop();
    }
}
