/** The DQN job, as DI-engine's dizoo sits beside ding: collector, evaluator and the DQN pipeline on the learner's one lifecycle, on any environment with a Discrete action space. */
package org.ding4j.example.cartpole;
