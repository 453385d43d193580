package org.ding4j.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One all-reduce through a c10d process group, from the call until its result is there. */
@Name("org.ding4j.AllReduce")
@Label("All-Reduce")
@Category("ding4j")
@Description("One all-reduce of a ding4j process group")
@Enabled(false)
@StackTrace(false)
public final class AllReduceEvent extends Event
{
    /** What was reduced: {@code gradients}, {@code log}, {@code vote}. */
    @Label("Purpose")
    public String purpose;

    /** Bytes reduced by this rank. */
    @Label("Bytes")
    @DataAmount
    public long bytes;

    /** This process's rank. */
    @Label("Rank")
    public int rank;

    /** The group's size. */
    @Label("World Size")
    public int worldSize;
}
