package org.ding4j.rl.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The evaluation schedule both pipelines share: when evaluations are due, the best return, and resume checks. */
class EvalScheduleTest
{
    @Test
    void evaluationsShouldBeDueAtZeroThenEveryEvalFreqUpdates()
    {
        final EvalSchedule schedule = new EvalSchedule(40, 195);
        assertTrue(schedule.due(0));
        assertFalse(schedule.due(0), "taken");
        assertFalse(schedule.due(39));
        assertTrue(schedule.due(45));
        assertFalse(schedule.due(84));
        assertTrue(schedule.due(85));
        final int[] saves = new int[1];
        assertFalse(schedule.record(100, () -> saves[0]++));
        assertFalse(schedule.record(90, () -> saves[0]++));
        assertTrue(schedule.record(196, () -> saves[0]++));
        assertEquals(2, saves[0], "only a new best saves");
        assertEquals(196, schedule.bestReturn(), 0.0);
    }

    @Test
    void aResumedScheduleShouldKeepItsBestAndRefuseCorruptValuesByName()
    {
        final EvalSchedule saved = new EvalSchedule(10, 0);
        saved.due(0);
        saved.record(-5, () -> { });
        final EvalSchedule resumed = new EvalSchedule(10, 0);
        resumed.restore(saved.state());
        assertEquals(-5, resumed.bestReturn(), 0.0);
        assertFalse(resumed.due(9), "the schedule continues from update 0's evaluation");
        final Map<String, Object> old = new HashMap<>(saved.state());
        old.remove("last_eval_return");
        resumed.restore(old);
        assertTrue(Double.isNaN(resumed.lastReturn()), "an older TD3/SAC state without last_eval_return");
        for (final double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY})
        {
            final Map<String, Object> corrupt = new HashMap<>(saved.state());
            corrupt.put("best_eval_return", bad);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> resumed.restore(corrupt));
            assertTrue(ex.getMessage().contains("best_eval_return must be a finite number"), ex.getMessage());
        }
        final Map<String, Object> before = new HashMap<>(saved.state());
        before.put("last_eval_iter", -7L);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> resumed.restore(before)).getMessage()
            .contains("last_eval_iter must be >= -1, got -7"));
    }
}
