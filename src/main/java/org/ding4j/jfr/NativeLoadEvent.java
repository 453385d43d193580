package org.ding4j.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The native libraries loaded (libtorch through JavaCPP, then ding4j's JNI library); its duration is the load. */
@Name("org.ding4j.NativeLoad")
@Label("Native Load")
@Category("ding4j")
@Description("ding4j's native libraries loaded")
@Enabled(false)
@StackTrace(false)
public final class NativeLoadEvent extends Event
{
    /** What was loaded: {@code libtorch} or {@code ding4j}. */
    @Label("Library")
    public String library;

    /** Where it was loaded from (a file, or the JavaCPP cache entry). */
    @Label("Path")
    public String path;
}
