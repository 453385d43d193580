/** Distributed-job identity (rank, world size) and, later, process groups and gradient all-reduce. */
package org.ding4j.dist;
