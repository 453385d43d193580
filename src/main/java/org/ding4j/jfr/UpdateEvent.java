package org.ding4j.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One learner update: its duration is the update (from the end of the {@code before_iter} hooks to the start of
 * the {@code after_iter} hooks, as {@code train_time}), with the update number it completed, the collector env step
 * and the wait for its batch ({@code data_time}, 0 outside {@code start()}).
 */
@Name("org.ding4j.Update")
@Label("Learner Update")
@Category("ding4j")
@Description("One policy update of a ding4j learner")
@Enabled(false)
@StackTrace(false)
public final class UpdateEvent extends Event
{
    /** The learner's instance name. */
    @Label("Learner")
    public String learner;

    /** Completed updates after this one (the learner's {@code lastIter}). */
    @Label("Update")
    public long update;

    /** The collector env step the batch was collected at (-1 if unknown). */
    @Label("Env Step")
    public long envStep;

    /** The update's wall time as the learner measured it ({@code train_time}). */
    @Label("Train Time")
    @Timespan(Timespan.NANOSECONDS)
    public long trainTime;

    /** The wait for this update's batch ({@code data_time}); 0 when the caller passed the batch. */
    @Label("Data Time")
    @Timespan(Timespan.NANOSECONDS)
    public long dataTime;
}
