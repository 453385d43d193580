/** The RL example's environment and job, as DI-engine's dizoo sits beside ding: CartPole, collector, evaluator and the DQN pipeline on the learner's one lifecycle. */
package org.ding4j.example.cartpole;
