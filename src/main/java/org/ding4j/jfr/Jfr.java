package org.ding4j.jfr;

import jdk.jfr.FlightRecorder;

/**
 * Whether each of ding4j's event types is on, asked before any event is made. Until the JVM's Flight Recorder is
 * initialised (a recording started with {@code -XX:StartFlightRecording}, {@code jcmd JFR.start} or
 * {@code new Recording()}) no event class is loaded at all: the first one loaded builds JFR's whole metadata
 * repository (about 60 ms of a 1 s training run's start on the 2-core machine). After that each answer is the event
 * type's own {@code isEnabled()}, a field read, so a recording started mid-run sees the events from then on.
 */
public final class Jfr
{
    private Jfr()
    {
    }

    /** @return whether {@link UpdateEvent}s are recorded now */
    public static boolean updates()
    {
        return FlightRecorder.isInitialized() && Probes.UPDATE.isEnabled();
    }

    /** @return whether {@link HookEvent}s are recorded now */
    public static boolean hooks()
    {
        return FlightRecorder.isInitialized() && Probes.HOOK.isEnabled();
    }

    /** @return whether {@link CheckpointEvent}s are recorded now */
    public static boolean checkpoints()
    {
        return FlightRecorder.isInitialized() && Probes.CHECKPOINT.isEnabled();
    }

    /** @return whether {@link AllReduceEvent}s are recorded now */
    public static boolean allReduces()
    {
        return FlightRecorder.isInitialized() && Probes.ALL_REDUCE.isEnabled();
    }

    /** @return whether {@link NativeLoadEvent}s are recorded now */
    public static boolean nativeLoads()
    {
        return FlightRecorder.isInitialized() && Probes.NATIVE_LOAD.isEnabled();
    }

    /** One never-committed instance per type, made on the first question after the recorder is up. */
    private static final class Probes
    {
        static final UpdateEvent UPDATE = new UpdateEvent();
        static final HookEvent HOOK = new HookEvent();
        static final CheckpointEvent CHECKPOINT = new CheckpointEvent();
        static final AllReduceEvent ALL_REDUCE = new AllReduceEvent();
        static final NativeLoadEvent NATIVE_LOAD = new NativeLoadEvent();

        private Probes()
        {
        }
    }
}
