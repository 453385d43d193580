/**
 * A JMX MBean per learner ({@link org.ding4j.jmx.LearnerMBean#register}): its counters, last log values and latency
 * percentiles, and operations to save a checkpoint now, pause, resume and stop, for JConsole, VisualVM, jmxterm or
 * a Prometheus JMX exporter. Only the JDK's {@code java.management}; the core does not depend on this package.
 */
package org.ding4j.jmx;
