/** Checks and helpers the other packages share; not API. */
package org.ding4j.internal;
