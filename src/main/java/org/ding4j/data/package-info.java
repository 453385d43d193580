/** The asynchronous data loader that feeds the learner in parallel mode. */
package org.ding4j.data;
