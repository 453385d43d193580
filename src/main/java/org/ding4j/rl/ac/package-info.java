/**
 * Off-policy actor-critic for any environment with a bounded {@link org.ding4j.env.Box} action space: TD3 and SAC
 * (twin critics, target critics moved by Polyak averaging; fused native update or libtorch autograd), their batch,
 * replay buffer, collector and evaluator, and their half of the one off-policy pipeline
 * ({@link org.ding4j.rl.ac.ActorCriticAlgorithm}). It
 * sits on the learner core, which never imports it.
 */
package org.ding4j.rl.ac;
