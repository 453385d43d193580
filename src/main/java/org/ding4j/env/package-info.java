/**
 * Environments with Gymnasium's contract in Java's idiom: spaces, {@link org.ding4j.env.Env}, vector envs, wrappers
 * and the env checker.
 */
package org.ding4j.env;
