package org.ding4j.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One call of one learner hook; its duration is the call's. */
@Name("org.ding4j.Hook")
@Label("Learner Hook")
@Category("ding4j")
@Description("One call of a ding4j learner hook")
@Enabled(false)
@StackTrace(false)
public final class HookEvent extends Event
{
    /** Where it was called: {@code before_run}, {@code before_iter}, {@code after_iter} or {@code after_run}. */
    @Label("Position")
    public String position;

    /** The hook's name. */
    @Label("Hook")
    public String hook;

    /** Completed updates when it was called. */
    @Label("Update")
    public long update;
}
