/** Checkpoint formats and atomic file writes. */
package org.ding4j.checkpoint;
