/**
 * DQN for any environment with a {@link org.ding4j.env.Discrete} action space: the policy (fused native update or
 * libtorch autograd), Q-network, batch and replay buffer, and DI-engine's serial pipeline around them ({@link
 * org.ding4j.example.dqn.DqnPipeline}: collector, evaluator, parallel mode, distributed ranks, elastic restarts). An
 * example of the learner beside the core, as DI-engine's dizoo sits beside ding: the core never imports it.
 */
package org.ding4j.example.dqn;
