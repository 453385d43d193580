/** The learn-mode policy interface the learner drives, and its allocation-free log sink. */
package org.ding4j.policy;
