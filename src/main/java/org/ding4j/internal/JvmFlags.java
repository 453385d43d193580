package org.ding4j.internal;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

/**
 * Checks the JVM flags ding4j cannot work without, so that a missing one is an error naming the flag at the first
 * entry point instead of an {@link IllegalAccessError} from deep inside Agrona.
 */
public final class JvmFlags
{
    /** The flag Agrona 2.x needs for its lock-free queues ({@code jdk.internal.misc.Unsafe}). */
    public static final String AGRONA_FLAG = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";

    private JvmFlags()
    {
    }

    /**
     * @throws IllegalStateException naming {@link #AGRONA_FLAG} if {@code java.base} does not export
     *                               {@code jdk.internal.misc} to Agrona's module
     */
    public static void requireAgronaAccess()
    {
        // A class literal does not initialise the class, so this cannot itself fail the way Agrona would.
        final Module agrona = OneToOneConcurrentArrayQueue.class.getModule();
        if (!Object.class.getModule().isExported("jdk.internal.misc", agrona))
        {
            throw new IllegalStateException("ding4j needs the JVM flag " + AGRONA_FLAG + " (Agrona's lock-free "
                + "queues use jdk.internal.misc.Unsafe): add it to the java command line"
                + (agrona.isNamed() ? " with " + agrona.getName() + " in place of ALL-UNNAMED" : "")
                + ", to surefire's argLine in tests, or to JDK_JAVA_OPTIONS");
        }
    }
}
