package org.ding4j.rl.envs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ding4j.env.EnvChecker;
import org.ding4j.env.StepResult;
import org.ding4j.env.TimeLimit;
import org.junit.jupiter.api.Test;

/**
 * Acrobot's dynamics on cases that can be worked by hand (the hanging rest is an equilibrium; a pure torque from rest
 * accelerates the joints as the book's mass matrix says), its wrap, speed bounds and termination, and the env
 * checker's rules.
 */
class AcrobotTest
{
    @Test
    void restShouldStayAtRestAndATorqueShouldAccelerateAsTheMassMatrixSays()
    {
        final Acrobot env = new Acrobot();
        final float[] obs = new float[Acrobot.OBS];
        final StepResult result = new StepResult();
        env.set(0, 0, 0, 0);
        env.step(new float[] {1}, obs, result);
        for (int i = 0; i < 4; i++)
        {
            // cos(-pi / 2) is 6e-17 in floating point, not 0: the rest holds to rounding.
            assertEquals(0.0, env.state(i), 1e-12, "no torque from the hanging rest: state " + i);
        }
        assertEquals(-1.0, result.reward(), 0.0);
        assertFalse(result.done());
        // From rest (th1 = th2 = 0), d1 = 0.25 + (1 + 0.25 + 1) + 2 = 4.5, d2 = 0.25 + 0.5 + 1 = 1.75, phi = 0:
        // ddth2 = tau / (0.25 + 1 - 1.75^2 / 4.5), ddth1 = -1.75 ddth2 / 4.5. Over the first instant the speeds
        // grow at those rates, so a short step's speeds point the same way, in that ratio.
        env.set(0, 0, 0, 0);
        env.step(new float[] {2}, obs, result);
        final double ddth2 = 1 / (1.25 - 1.75 * 1.75 / 4.5);
        assertTrue(env.state(3) > 0 && env.state(2) < 0, "the torque turns the joints apart");
        assertEquals(-1.75 / 4.5, env.state(2) / env.state(3), 0.05, "dth1 / dth2 near the mass matrix's ratio");
        assertEquals(ddth2 * 0.2, env.state(3), 0.5 * ddth2 * 0.2, "dth2 near ddth2 * dt (gravity acts meanwhile)");
        assertEquals((float)Math.cos(env.state(0)), obs[0], 0f);
        assertEquals((float)env.state(3), obs[5], 0f);
    }

    @Test
    void anglesShouldWrapSpeedsBeBoundedAndTheRaisedEndTerminate()
    {
        assertEquals(-Math.PI + 0.5, Acrobot.wrap(Math.PI + 0.5), 1e-12);
        assertEquals(Math.PI - 0.5, Acrobot.wrap(-3 * Math.PI - 0.5), 1e-12);
        final Acrobot env = new Acrobot();
        final float[] obs = new float[Acrobot.OBS];
        final StepResult result = new StepResult();
        env.set(0, 0, 100, -100);
        env.step(new float[] {1}, obs, result);
        assertTrue(Math.abs(env.state(2)) <= 4 * Math.PI, "dth1 bounded to 4 pi: " + env.state(2));
        assertTrue(Math.abs(env.state(3)) <= 9 * Math.PI, "dth2 bounded to 9 pi: " + env.state(3));
        assertTrue(Math.abs(env.state(0)) <= Math.PI && Math.abs(env.state(1)) <= Math.PI, "angles wrapped");
        // Both links pointing up: -cos(pi) - cos(2 pi) = 1 - 1 = 0; first up, second straight: 1 + 1 = 2 > 1.
        env.set(Math.PI, 0, 0, 0);
        env.step(new float[] {1}, obs, result);
        assertTrue(result.terminated() && !result.truncated(), "the raised end terminates");
        assertEquals(0.0, result.reward(), 0.0);
    }

    @Test
    void startsShouldBeSeededAndTheEnvPassTheChecker()
    {
        final Acrobot a = new Acrobot();
        final float[] x = new float[Acrobot.OBS];
        a.reset(9, x);
        for (int i = 0; i < 4; i++)
        {
            assertTrue(Math.abs(a.state(i)) <= 0.1, "start " + i);
        }
        final TimeLimit limited = new TimeLimit(new Acrobot(), Acrobot.EPISODE_STEPS);
        EnvChecker.check(limited, 4, 1200);
        final StepResult result = new StepResult();
        limited.reset(4, x);
        int t = 0;
        do
        {
            limited.step(new float[] {1}, x, result);
            t++;
        }
        while (!result.done());
        assertEquals(Acrobot.EPISODE_STEPS, t, "no torque never raises the end: the time limit truncates");
        assertTrue(result.truncated());
    }
}
