/**
 * The environments ding4j ships ({@link org.ding4j.example.envs.CartPole}, {@link org.ding4j.example.envs.Pendulum},
 * {@link org.ding4j.example.envs.Acrobot}) and what {@code env.type} names.
 */
package org.ding4j.example.envs;
