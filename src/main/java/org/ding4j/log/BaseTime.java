package org.ding4j.log;

/** The clock a {@link LoggedModel} stamps records with (DI-engine's {@code BaseTime}). */
public interface BaseTime
{
    /** @return the current time; never less than an earlier answer */
    double time();
}
