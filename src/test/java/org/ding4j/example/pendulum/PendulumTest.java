package org.ding4j.example.pendulum;

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
        final Pendulum env = new Pendulum(1, Pendulum.EPISODE_STEPS, 0);
        final float[] obs = new float[Pendulum.OBS];
        for (final double[] row : table().subList(0, 300))
        {
            env.set(0, row[0], row[1]);
            // libm's and Java's sin may differ in the last bit: 1e-12 is a few ulps of these magnitudes.
            assertEquals(row[3], env.step(0, row[2]), 1e-12, () -> "reward of " + java.util.Arrays.toString(row));
            assertEquals(row[4], env.theta(0), 1e-12, "theta");
            assertEquals(row[5], env.thetaDot(0), 1e-12, "theta dot");
            env.observe(0, obs, 0);
            for (int k = 0; k < Pendulum.OBS; k++)
            {
                assertEquals((float)row[6 + k], obs[k], Math.ulp((float)row[6 + k]), "observation " + k);
            }
        }
    }

    @Test
    void anEpisodeShouldFollowGymsTrajectoryAndBeTruncatedNotTerminated() throws IOException
    {
        final List<double[]> episode = table().subList(300, 500);
        final Pendulum env = new Pendulum(1, Pendulum.EPISODE_STEPS, 0);
        env.set(0, episode.get(0)[0], episode.get(0)[1]);
        double worst = 0;
        for (int t = 0; t < episode.size(); t++)
        {
            assertFalse(env.truncated(0), "cut before step " + t);
            final double[] row = episode.get(t);
            final double reward = env.step(0, row[2]);
            worst = Math.max(worst, Math.max(Math.abs(reward - row[3]), Math.abs(env.theta(0) - row[4])));
        }
        assertTrue(worst < 1e-9, "largest difference from gym over 200 steps: " + worst);
        assertTrue(env.truncated(0), "200 steps make a v1 episode");
    }

    @Test
    void startsShouldBeGymsAndSeeded()
    {
        final Pendulum a = new Pendulum(64, Pendulum.EPISODE_STEPS, 7);
        final Pendulum b = new Pendulum(64, Pendulum.EPISODE_STEPS, 7);
        for (int i = 0; i < a.size(); i++)
        {
            assertTrue(Math.abs(a.theta(i)) <= Math.PI && Math.abs(a.thetaDot(i)) <= 1.0);
            assertEquals(a.theta(i), b.theta(i), 0.0);
            assertEquals(a.thetaDot(i), b.thetaDot(i), 0.0);
        }
        assertTrue(a.theta(0) != a.theta(1), "each environment has its own stream");
    }

    @Test
    void torquesShouldBeClippedAndNonFiniteOnesRefused()
    {
        final Pendulum env = new Pendulum(2, Pendulum.EPISODE_STEPS, 0);
        env.set(0, 0.5, 0.25);
        env.set(1, 0.5, 0.25);
        assertEquals(env.step(0, 2.0), env.step(1, 50.0), 0.0);
        assertEquals(env.thetaDot(0), env.thetaDot(1), 0.0);
        final IllegalArgumentException nan = assertThrows(IllegalArgumentException.class, () -> env.step(0,
            Double.NaN));
        assertEquals("action: expected a finite torque, got NaN", nan.getMessage());
        assertEquals(-Math.PI, Pendulum.angleNormalize(-Math.PI), 0.0);
        assertEquals(-Math.PI + 0.5, Pendulum.angleNormalize(-3 * Math.PI + 0.5), 1e-12);
        assertEquals(Math.PI - 0.5, Pendulum.angleNormalize(3 * Math.PI - 0.5), 1e-12);
    }
}
