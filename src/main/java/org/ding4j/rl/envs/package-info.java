/**
 * The environments ding4j ships ({@link org.ding4j.rl.envs.CartPole}, {@link org.ding4j.rl.envs.Pendulum},
 * {@link org.ding4j.rl.envs.Acrobot}) and what {@code env.type} names.
 */
package org.ding4j.rl.envs;
