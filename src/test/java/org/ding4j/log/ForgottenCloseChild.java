package org.ding4j.log;

import java.io.IOException;
import java.nio.file.Path;

/** A child JVM of {@link TensorBoardWriterTest}: writes scalars, never closes its writer, exits. */
public final class ForgottenCloseChild
{
    private ForgottenCloseChild()
    {
    }

    public static void main(final String[] args) throws IOException, ReflectiveOperationException
    {
        final TensorBoardWriter writer = new TensorBoardWriter(Path.of(args[0]));
        for (int i = 1; i <= 50; i++)
        {
            writer.addScalar("learner_iter/total_loss_avg", i, i);
        }
        // The JVM's registered hooks (java.lang.ApplicationShutdownHooks, read by reflection in this test child only).
        final java.lang.reflect.Field hooks = Class.forName("java.lang.ApplicationShutdownHooks")
            .getDeclaredField("hooks");
        hooks.setAccessible(true);
        final boolean ours = ((java.util.Map<?, ?>)hooks.get(null)).keySet().stream()
            .anyMatch(t -> ((Thread)t).getName().startsWith("ding4j"));
        System.out.println(ours ? "shutdown hooks: ding4j took one" : "shutdown hooks: none of ding4j's");
        System.out.println(writer.file());
        System.exit(0);
    }
}
