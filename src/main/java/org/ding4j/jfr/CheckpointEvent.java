package org.ding4j.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One checkpoint written or loaded (and verified); its duration is the whole operation's. */
@Name("org.ding4j.Checkpoint")
@Label("Checkpoint")
@Category("ding4j")
@Description("A ding4j checkpoint saved or loaded")
@Enabled(false)
@StackTrace(false)
public final class CheckpointEvent extends Event
{
    /** {@code save} or {@code load}. */
    @Label("Operation")
    public String operation;

    /** The checkpoint file. */
    @Label("File")
    public String file;

    /** The file's size. */
    @Label("Bytes")
    @DataAmount
    public long bytes;

    /** Completed updates the checkpoint holds (after a load: the restored count). */
    @Label("Update")
    public long update;
}
