package org.ding4j.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class LoggedModelTest
{
    /** A settable clock: the collaborator that decides time, not under test. */
    static final class ManualTime implements BaseTime
    {
        double now;

        @Override
        public double time()
        {
            return now;
        }
    }

    @Test
    void shouldAverageTheWindowKeepingTheLastRecordBeforeIt()
    {
        final TickMonitor monitor = new TickMonitor(List.of("total_loss"), 3);
        for (int tick = 0; tick < 6; tick++)
        {
            monitor.record("total_loss", tick * 10.0);
            monitor.step();
        }
        // Now tick 6, window [3, 6]: records at ticks 3, 4, 5 plus the last before the window (tick 2).
        assertEquals((20.0 + 30.0 + 40.0 + 50.0) / 4, monitor.avg("total_loss"));
        assertEquals(50.0, monitor.val("total_loss"));
        assertTrue(monitor.variables().containsAll(List.of("data_time", "train_time", "sample_count", "total_loss")));
    }

    @Test
    void aHugeValueLeavingTheWindowShouldNotLeaveItsRoundingInTheMean()
    {
        final TickMonitor monitor = new TickMonitor(List.of("total_loss"), 10);
        final LoggedModel.Variable loss = monitor.variable("total_loss");
        // A loss spike, then small values: with a plain running sum, 1e12 + 1e-3 - 1e12 keeps an error of ~1e-4.
        loss.record(1e12);
        monitor.step();
        for (int tick = 1; tick < 200; tick++)
        {
            loss.record(1e-3 * (1 + tick % 3));
            monitor.step();
        }
        double exact = 0;
        for (int tick = 189; tick < 200; tick++)
        {
            exact += 1e-3 * (1 + tick % 3);
        }
        assertEquals(exact / 11, monitor.avg("total_loss"), 1e-15);
        assertEquals(monitor.avg("total_loss"), monitor.value("avg", "total_loss"));
    }

    @Test
    void shouldMatchANaiveWindowMeanOverManyRecords()
    {
        final ManualTime clock = new ManualTime();
        final LoggedModel model = new LoggedModel(clock, 7.5);
        model.declare("x", Double.class);
        final Random random = new Random(5);
        final double[] times = new double[5000];
        final double[] values = new double[5000];
        for (int i = 0; i < times.length; i++)
        {
            clock.now += random.nextDouble() * 2;
            times[i] = clock.now;
            values[i] = random.nextGaussian() * 100;
            model.record("x", values[i]);
            if (0 == i % 37)
            {
                int first = i;
                while (first > 0 && times[first] >= clock.now - 7.5)
                {
                    first--;
                }
                double sum = 0;
                for (int k = first; k <= i; k++)
                {
                    sum += values[k];
                }
                assertEquals(sum / (i - first + 1), model.avg("x"), 1e-9, "at record " + i);
            }
        }
    }

    @Test
    void shouldShowNaNAndInfinityAndRecoverOnceTheyLeaveTheWindow()
    {
        final TickMonitor monitor = new TickMonitor(List.of("q"), 2);
        monitor.record("q", Double.NaN);
        monitor.step();
        assertTrue(Double.isNaN(monitor.avg("q")));
        for (int i = 0; i < 5; i++)
        {
            monitor.record("q", 1.0);
            monitor.step();
        }
        assertEquals(1.0, monitor.avg("q"), "the NaN left the window and did not poison the running sum");
        monitor.record("q", Double.POSITIVE_INFINITY);
        assertEquals(Double.POSITIVE_INFINITY, monitor.avg("q"));
    }

    @Test
    void shouldRejectBadUse()
    {
        final ManualTime clock = new ManualTime();
        final LoggedModel model = new LoggedModel(clock, 10);
        model.declare("steps", Long.class);
        assertMessage("monitor variable steps: expected a Long, got Double 1.5", () -> model.record("steps", (Object)1.5d));
        model.record("steps", (Object)3L);
        clock.now = -1;
        assertMessage("monitor variable steps: time went backwards from 0.0 to -1.0", () -> model.record("steps", 4.0));
        assertMessage("monitor variable nope is not declared", () -> model.record("nope", 1.0));
        model.declare("empty", Double.class);
        assertMessage("monitor variable empty has no record yet", () -> model.avg("empty"));
        assertMessage("monitor variable steps is declared twice", () -> model.declare("steps", Long.class));
        assertMessage("expire: expected a positive window, got 0.0", () -> new LoggedModel(clock, 0));
        assertMessage("expire: expected a positive window, got NaN", () -> new LoggedModel(clock, Double.NaN));
        assertMessage("monitor variable steps has no attribute max", () -> model.value("max", "steps"));
    }

    @Test
    void shouldFreezeTimeAndComputeRegisteredStatistics()
    {
        final ManualTime clock = new ManualTime();
        final LoggedModel model = new LoggedModel(clock, 100);
        model.declare("loss", Double.class);
        model.registerAttributeValue("max", "loss", window -> {
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < window.count(); i++)
            {
                max = Math.max(max, window.value(i));
            }
            return max;
        });
        clock.now = 5;
        model.freeze();
        clock.now = 50;
        model.record("loss", 2.0);
        model.record("loss", 7.0);
        assertEquals(5.0, model.currentTime(), "frozen");
        model.unfreeze();
        model.record("loss", 3.0);
        assertEquals(50.0, model.currentTime());
        assertEquals(7.0, model.value("max", "loss"));
        assertEquals(4.0, model.value("avg", "loss"));
        assertEquals(3.0, model.value("val", "loss"));
    }

    @Test
    void shouldNeverGoBackwardsOnNaturalTime()
    {
        final NaturalTime time = new NaturalTime();
        double previous = time.time();
        for (int i = 0; i < 1000; i++)
        {
            final double now = time.time();
            assertTrue(now >= previous);
            previous = now;
        }
        assertTrue(previous > 1.7e9, "seconds since the epoch");
    }

    private static void assertMessage(final String expected, final org.junit.jupiter.api.function.Executable call)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().startsWith(expected), ex.getMessage());
    }
}
