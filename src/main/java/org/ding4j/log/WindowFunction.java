package org.ding4j.log;

/** A custom statistic over one variable's records in the window (DI-engine's {@code register_attribute_value}). */
@FunctionalInterface
public interface WindowFunction
{
    /**
     * @param window the records in the window, oldest first (including the last one before it)
     * @return the statistic
     */
    double apply(LoggedModel.Window window);
}
