/**
 * DQN for any environment with a {@link org.ding4j.env.Discrete} action space: the policy (fused native update or
 * libtorch autograd), Q-network, batch and replay buffer, its collector and evaluator, and its half of the one
 * off-policy pipeline ({@link org.ding4j.rl.dqn.DqnAlgorithm}). It sits on the learner
 * core, which never imports it.
 */
package org.ding4j.rl.dqn;
