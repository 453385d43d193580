package org.ding4j.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * The launcher's logback filter ({@code logback-cli.xml}) that drops an event marked {@code DING4J_RETHROWN}: a
 * failure the learner logs and throws, which the command line says in its own one line. It compares the marker by name:
 * logback's {@code MarkerFilter} asks SLF4J's {@code MarkerFactory} for its marker while logback is being configured,
 * which fails (a WARN with a stack trace, and no filter) where the first logger of the process is a program's own
 * ({@code ding4j launch --main}), SLF4J being then still in its own initialisation.
 */
public final class RethrownFilter extends TurboFilter
{
    /** The marker's name, as {@code org.ding4j.log.LearnerLog.RETHROWN} has it. */
    private static final String RETHROWN = "DING4J_RETHROWN";

    @Override
    public FilterReply decide(final Marker marker, final Logger logger, final Level level, final String format,
        final Object[] params, final Throwable t)
    {
        return null != marker && marker.contains(RETHROWN) ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
