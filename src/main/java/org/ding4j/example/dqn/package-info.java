/** The RL example's algorithm, beside the core as DI-engine's policies sit beside its learner: DQN policy, Q-network, batch, replay buffer. */
package org.ding4j.example.dqn;
