/** The learner: BaseLearner, its registry, counters and the info it reports. */
package org.ding4j.learner;
