/** Learner hooks: positions, priority-sorted dispatch, the narrow context hooks receive, the registry and the built-in hooks. */
package org.ding4j.hook;
