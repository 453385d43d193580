package org.ding4j.micrometer;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.ding4j.learner.BaseLearner;
import org.ding4j.log.LearnerLatency;
import org.ding4j.log.ScalarDict;

/**
 * Binds a learner's meters, tagged {@code experiment} and {@code learner} (its instance name):
 * <ul>
 * <li>{@code ding4j.learner.updates} (function counter) and {@code ding4j.learner.env.steps} (gauge);</li>
 * <li>{@code ding4j.learner.value} (gauge, tag {@code key}) for each log var, its latest value (NaN before the
 * first write): those registered when bound, and those a map policy registers later (on its first update), added
 * when the registry next reads the update counter;</li>
 * <li>{@code ding4j.learner.train.time} and {@code ding4j.learner.data.time} (time gauges, tag {@code percentile}
 * 0.5, 0.99, 0.999) over every update so far, from the learner's HdrHistogram recorders.</li>
 * </ul>
 * The meters leave the registry when the learner closes. Reading a meter never stops the training thread.
 */
public final class LearnerMetrics implements MeterBinder
{
    private static final double[] PERCENTILES = {50, 99, 99.9};
    /** The tags as Prometheus writes quantiles (not {@code p / 100}, which prints 0.9990000000000001). */
    private static final String[] QUANTILE_TAGS = {"0.5", "0.99", "0.999"};

    private final BaseLearner<?> learner;
    /** Per registry bound: the meters to remove at close and the log vars bound so far. */
    private static final class Binding
    {
        final MeterRegistry registry;
        final Tags tags;
        final List<Meter> meters = new ArrayList<>();
        int valuesBound;
        /** Set when the learner closed and its meters went: a scrape racing the close binds none again. */
        boolean removed;

        Binding(final MeterRegistry registry, final Tags tags)
        {
            this.registry = registry;
            this.tags = tags;
        }
    }

    /** @param learner the learner whose meters to bind */
    public LearnerMetrics(final BaseLearner<?> learner)
    {
        this.learner = Objects.requireNonNull(learner, "learner");
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException if the registry has this learner's meters already (two learners of the same
     *                               experiment and instance name would share them) or the learner is closed
     */
    @Override
    public void bindTo(final MeterRegistry registry)
    {
        final Tags tags = Tags.of("experiment", learner.expName(), "learner", learner.instanceName());
        if (null != registry.find("ding4j.learner.updates").tags(tags).meter())
        {
            throw new IllegalStateException("the registry has the meters of learner " + learner.instanceName()
                + " of experiment " + learner.expName() + " already: two learners in one JVM need other experiment or "
                + "instance names");
        }
        final Binding binding = new Binding(registry, tags);
        final List<Meter> meters = binding.meters;
        // Tied to the learner before any meter exists: a closed one refuses, and no meter is left for good.
        learner.closeWith(() -> {
            synchronized (binding)
            {
                binding.removed = true;
                meters.forEach(registry::remove);
            }
        });
        meters.add(FunctionCounter.builder("ding4j.learner.updates", binding, this::updates)
            .tags(tags).description("completed updates").register(registry));
        meters.add(Gauge.builder("ding4j.learner.env.steps", learner, BaseLearner::collectorEnvstep)
            .tags(tags).description("collector env step of the last update").register(registry));
        bindValues(binding);
        final LearnerLatency latency = learner.log().latency();
        for (final String var : new String[] {"train_time", "data_time"})
        {
            for (int i = 0; i < PERCENTILES.length; i++)
            {
                final double p = PERCENTILES[i];
                meters.add(TimeGauge.builder("ding4j.learner." + var.replace('_', '.'), latency,
                        TimeUnit.NANOSECONDS, l -> l.percentile(var, p))
                    .tags(tags.and("percentile", QUANTILE_TAGS[i])).description(var + " percentile")
                    .register(registry));
            }
        }
    }

    private double updates(final Binding binding)
    {
        bindValues(binding);
        return learner.trainIter();
    }

    private void bindValues(final Binding binding)
    {
        final ScalarDict scalar = learner.logBuffer().scalar();
        synchronized (binding)
        {
            if (binding.removed)
            {
                return;
            }
            for (int i = binding.valuesBound; i < scalar.keyCount(); i++)
            {
                final int index = i;
                binding.meters.add(Gauge.builder("ding4j.learner.value", scalar,
                        s -> s.wasWritten(index) ? s.value(index) : Double.NaN)
                    .tags(binding.tags.and("key", scalar.name(i))).description("latest value of a log var")
                    .register(binding.registry));
            }
            binding.valuesBound = Math.max(binding.valuesBound, scalar.keyCount());
        }
    }
}
