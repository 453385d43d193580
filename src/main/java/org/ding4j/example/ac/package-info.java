/**
 * Off-policy actor-critic for continuous actions on the typed {@link org.ding4j.policy.Policy} API: TD3 and SAC
 * (twin critics, target critics moved by Polyak averaging), their batch, replay buffer and shared twin critic. An
 * example of the learner, not part of the core: the core never imports it.
 */
package org.ding4j.example.ac;
