package org.ding4j.rl.envs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.ding4j.env.EnvChecker;
import org.ding4j.env.StepResult;
import org.ding4j.env.TimeLimit;
import org.junit.jupiter.api.Test;

/**
 * The Java Pendulum against a table written by gym's Pendulum-v1 formula ({@code benchmarks/python/
 * pendulum_table.py}, numpy in float64): 300 single steps from random states and torques (angles far past pi,
 * speeds and torques past their clips), then a 200-step episode stepped on from the table's start.
 */
class PendulumTest
{
    /** Rows: th, thdot, u, reward, newth, newthdot, obs_cos, obs_sin, obs_thdot. */
    private static List<double[]> table() throws IOException
    {
        final List<double[]> rows = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
            PendulumTest.class.getResourceAsStream("pendulum_steps.csv"), StandardCharsets.UTF_8)))
        {
            in.readLine();
            for (String line = in.readLine(); null != line; line = in.readLine())
            {
                final String[] cells = line.split(",");
                final double[] row = new double[cells.length];
                for (int k = 0; k < cells.length; k++)
                {
                    row[k] = Double.parseDouble(cells[k]);
                }
                rows.add(row);
            }
        }
        assertEquals(500, rows.size());
        return rows;
    }

    @Test
    void singleStepsShouldMatchGymsFormula() throws IOException
    {
        final Pendulum env = new Pendulum();
        final float[] obs = new float[Pendulum.OBS];
        final StepResult result = new StepResult();
        for (final double[] row : table().subList(0, 300))
        {
            env.set(row[0], row[1]);
            // libm's and Java's sin may differ in the last bit: 1e-12 is a few ulps of these magnitudes.
            assertEquals(row[3], env.step(row[2]), 1e-12, () -> "reward of " + java.util.Arrays.toString(row));
            assertEquals(row[4], env.theta(), 1e-12, "theta");
            assertEquals(row[5], env.thetaDot(), 1e-12, "theta dot");
            // Through the Env API: the torque as a float (within 1e-6 of the table's), the observation as float32.
            env.set(row[0], row[1]);
            env.step(new float[] {(float)row[2]}, obs, result);
            assertFalse(result.terminated() || result.truncated(), "Pendulum never ends an episode itself");
            assertEquals(row[3], result.reward(), 1e-5, () -> "reward of " + java.util.Arrays.toString(row));
            for (int k = 0; k < Pendulum.OBS; k++)
            {
                assertEquals((float)row[6 + k], obs[k], 1e-5, "observation " + k);
            }
        }
    }

    @Test
    void anEpisodeShouldFollowGymsTrajectoryAndBeTruncatedByTheTimeLimit() throws IOException
    {
        final List<double[]> episode = table().subList(300, 500);
        final Pendulum env = new Pendulum();
        env.set(episode.get(0)[0], episode.get(0)[1]);
        double worst = 0;
        for (final double[] row : episode)
        {
            final double reward = env.step(row[2]);
            worst = Math.max(worst, Math.max(Math.abs(reward - row[3]), Math.abs(env.theta() - row[4])));
        }
        assertTrue(worst < 1e-9, "largest difference from gym over 200 steps: " + worst);
        final TimeLimit limited = new TimeLimit(new Pendulum(), Pendulum.EPISODE_STEPS);
        final float[] obs = new float[Pendulum.OBS];
        final StepResult result = new StepResult();
        limited.reset(0, obs);
        for (int t = 1; t <= Pendulum.EPISODE_STEPS; t++)
        {
            limited.step(new float[] {0.5f}, obs, result);
            assertEquals(t == Pendulum.EPISODE_STEPS, result.truncated(), "truncated at step " + t);
            assertFalse(result.terminated(), "never terminated");
        }
    }

    @Test
    void startsShouldBeGymsAndSeeded()
    {
        final Pendulum a = new Pendulum();
        final Pendulum b = new Pendulum();
        final float[] obs = new float[Pendulum.OBS];
        for (int seed = 0; seed < 64; seed++)
        {
            a.reset(7 + seed, obs);
            b.reset(7 + seed, obs);
            assertTrue(Math.abs(a.theta()) <= Math.PI && Math.abs(a.thetaDot()) <= 1.0);
            assertEquals(a.theta(), b.theta(), 0.0);
            assertEquals(a.thetaDot(), b.thetaDot(), 0.0);
        }
        a.reset(1, obs);
        final double first = a.theta();
        a.reset(obs);
        assertTrue(first != a.theta(), "the next episode continues the stream");
        EnvChecker.check(new TimeLimit(new Pendulum(), Pendulum.EPISODE_STEPS), 3, 450);
    }

    @Test
    void torquesShouldBeClippedAndNonFiniteOnesRefused()
    {
        final Pendulum a = new Pendulum();
        final Pendulum b = new Pendulum();
        a.set(0.5, 0.25);
        b.set(0.5, 0.25);
        assertEquals(a.step(2.0), b.step(50.0), 0.0);
        assertEquals(a.thetaDot(), b.thetaDot(), 0.0);
        final IllegalArgumentException nan = assertThrows(IllegalArgumentException.class, () -> a.step(Double.NaN));
        assertEquals("action: expected a finite torque, got NaN", nan.getMessage());
        assertEquals(-Math.PI, Pendulum.angleNormalize(-Math.PI), 0.0);
        assertEquals(-Math.PI + 0.5, Pendulum.angleNormalize(-3 * Math.PI + 0.5), 1e-12);
        assertEquals(Math.PI - 0.5, Pendulum.angleNormalize(3 * Math.PI - 0.5), 1e-12);
    }
}
