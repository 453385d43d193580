/** The typed learn-mode policy API the learner drives: Policy, its allocation-free LogSink, MapPolicy for DI-engine's map style. */
package org.ding4j.policy;
