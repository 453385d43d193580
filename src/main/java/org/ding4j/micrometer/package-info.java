/**
 * A Micrometer {@code MeterBinder} for a learner ({@link org.ding4j.micrometer.LearnerMetrics}): the counters, log
 * values and latency percentiles the JMX bean shows, as meters of any Micrometer registry (Prometheus, JMX, ...).
 * {@code micrometer-core} is an optional dependency of ding4j: only this package needs it on the class path.
 */
package org.ding4j.micrometer;
