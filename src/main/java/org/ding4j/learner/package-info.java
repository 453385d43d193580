/** The learner: BaseLearner, the one training lifecycle (TrainingLoop, runner), its checkpoints, config and registry. */
package org.ding4j.learner;
