package org.ding4j.rl.envs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ding4j.env.EnvChecker;
import org.ding4j.env.StepResult;
import org.ding4j.env.TimeLimit;
import org.junit.jupiter.api.Test;

/** CartPole's dynamics by hand, its termination, its seeded starts and the env checker's rules. */
class CartPoleTest
{
    @Test
    void shouldStepAsTheClassicEquationsByHand()
    {
        final CartPole env = new CartPole();
        final float[] obs = new float[CartPole.OBS];
        final StepResult result = new StepResult();
        env.set(0, 0, 0, 0);
        env.step(new float[] {1}, obs, result);
        assertFalse(result.done());
        assertEquals(1.0, result.reward(), 0.0);
        // temp = 10/1.1; thetaAcc = -temp / (0.5 (4/3 - 0.1/1.1)); xAcc = temp - 0.05 thetaAcc / 1.1
        final double temp = 10 / 1.1;
        final double thetaAcc = -temp / (0.5 * (4.0 / 3.0 - 0.1 / 1.1));
        final double xAcc = temp - 0.05 * thetaAcc / 1.1;
        assertEquals(0.0, env.state(0), 0.0);
        assertEquals(0.02 * xAcc, env.state(1), 1e-12);
        assertEquals(0.0, env.state(2), 0.0);
        assertEquals(0.02 * thetaAcc, env.state(3), 1e-12);
        assertEquals(0.195122, env.state(1), 1e-6);
        assertEquals(-0.292683, env.state(3), 1e-6);
        assertEquals((float)env.state(3), obs[3], 0.0);
        env.set(2.39, 1.0, 0, 0);
        env.step(new float[] {1}, obs, result);
        assertTrue(result.terminated() && !result.truncated(), "x passes 2.4: terminated");
        final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
            () -> env.step(new float[] {2}, obs, result));
        assertEquals("action: expected an integer in [0, 2), got 2.0", bad.getMessage());
    }

    @Test
    void startsShouldBeSeededAndTheTimeLimitATruncation()
    {
        final CartPole a = new CartPole();
        final CartPole b = new CartPole();
        final float[] x = new float[CartPole.OBS];
        final float[] y = new float[CartPole.OBS];
        a.reset(5, x);
        b.reset(5, y);
        assertEquals(java.util.Arrays.toString(x), java.util.Arrays.toString(y));
        for (final float v : x)
        {
            assertTrue(Math.abs(v) <= 0.05f);
        }
        final TimeLimit limited = new TimeLimit(new CartPole(), 3);
        final StepResult result = new StepResult();
        limited.reset(0, x);
        for (int t = 1; t <= 3; t++)
        {
            // Alternate pushes keep the pole up for three steps.
            limited.step(new float[] {t % 2}, x, result);
            assertEquals(3 == t, result.truncated(), "step " + t);
            assertFalse(result.terminated());
        }
        EnvChecker.check(new TimeLimit(new CartPole(), 200), 11, 600);
    }
}
