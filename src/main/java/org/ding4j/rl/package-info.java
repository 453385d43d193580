/**
 * The algorithms on the learner: DQN ({@link org.ding4j.rl.dqn}), TD3 and SAC ({@link org.ding4j.rl.ac}) and PPO
 * ({@link org.ding4j.rl.ppo}) on any {@link org.ding4j.env.Env} whose spaces they take, all run by one pipeline,
 * {@link org.ding4j.rl.OffPolicyPipeline} (the algorithm picked by {@code policy.type}); {@link
 * org.ding4j.rl.ServingActor} lets a service's threads act on the latest published weights while training goes on.
 * The learner core never imports this package; the command line sits on top of it.
 */
package org.ding4j.rl;
