/**
 * PPO for any environment with a {@link org.ding4j.env.Discrete} (categorical head) or bounded
 * {@link org.ding4j.env.Box} (Gaussian head) action space: the policy (fused native update or libtorch autograd), its
 * batch, the rollout with GAE, and its half of the one pipeline ({@link org.ding4j.rl.ppo.PpoAlgorithm}).
 */
package org.ding4j.rl.ppo;
