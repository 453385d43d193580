package org.ding4j.log;

import java.io.IOException;
import java.nio.file.Path;

/** A child JVM of {@link TensorBoardWriterTest}: writes scalars, never closes its writer, exits. */
public final class ForgottenCloseChild
{
    private ForgottenCloseChild()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final TensorBoardWriter writer = new TensorBoardWriter(Path.of(args[0]));
        for (int i = 1; i <= 50; i++)
        {
            writer.addScalar("learner_iter/total_loss_avg", i, i);
        }
        System.out.println(writer.file());
        System.exit(0);
    }
}
