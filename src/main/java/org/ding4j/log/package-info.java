/** Log buffers, the tick monitor and its windowed averages, and the text table of averages. */
package org.ding4j.log;
