/**
 * DQN for any environment with a {@link org.ding4j.env.Discrete} action space: the policy (fused native update or
 * libtorch autograd), Q-network, batch and replay buffer, its collector and evaluator, and its half of the one
 * off-policy pipeline ({@link org.ding4j.example.dqn.DqnAlgorithm}). An example of the learner beside the core, as
 * DI-engine's dizoo sits beside ding: the core never imports it.
 */
package org.ding4j.example.dqn;
