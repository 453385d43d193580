/** Command-line entry points run by the {@code ./ding4j} launcher. */
package org.ding4j.cli;
