/** Immutable config trees: defaults, deep merge, validation with full key paths, files and dotted overrides. */
package org.ding4j.config;
