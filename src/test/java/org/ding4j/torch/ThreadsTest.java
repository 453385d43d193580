package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("native")
@Tag("own-jvm")
class ThreadsTest
{
    @Test
    void shouldApplyTheDefaultsOnceAndReportWhatIsInForce()
    {
        final Threads.Settings settings = Threads.configure();
        assertSame(settings, Threads.configure(), "configure() is idempotent");
        assertEquals(1, settings.intraOp());
        assertEquals(1, torch.get_num_threads());
        assertEquals(Threads.DEFAULT_BLAS_THREADS, settings.blas());
        assertEquals(settings.blas(), openblas_nolapack.blas_get_num_threads());
    }

    @Test
    void shouldSetExplicitCountsAndRejectNonPositiveOnes()
    {
        final Threads.Settings before = Threads.configure();
        try
        {
            final Threads.Settings explicit = Threads.configure(2, 1, 1);
            assertEquals(2, explicit.intraOp());
            assertEquals(1, openblas_nolapack.blas_get_num_threads());
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> Threads.configure(0, 1, 1));
            assertEquals("intraOp: expected a positive integer, got 0", ex.getMessage());
        }
        finally
        {
            Threads.configure(before.intraOp(), 1, before.blas());
        }
    }
}
