/**
 * Weights published by a training thread for any number of serving threads: lock-free, never torn, 0 bytes per
 * read.
 */
package org.ding4j.serve;
