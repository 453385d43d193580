/**
 * Java Flight Recorder events of ding4j ({@code jdk.jfr}, no dependency beyond the JDK): one per update, per hook
 * call, per checkpoint write and load, per all-reduce and per native library load. All are off by default
 * ({@code @Enabled(false)}) and cost a field read each when off; until the JVM's Flight Recorder is up no event class
 * is even loaded ({@link org.ding4j.jfr.Jfr}). {@code ding4j.jfc} in this package (on the class
 * path, and as {@code ding4j.jfc} beside the launcher) turns them all on over JFR's {@code default} settings.
 * This package depends on nothing else of ding4j, so every layer may emit its events.
 */
package org.ding4j.jfr;
