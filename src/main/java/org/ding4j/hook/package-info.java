/** Learner hooks: positions, priority-sorted dispatch, the registry and the built-in hooks. */
package org.ding4j.hook;
