package org.ding4j.env;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.function.IntFunction;

import org.junit.jupiter.api.Test;

/** Spaces, vector envs (in-thread and threaded), the wrappers and the env checker, on a small env of the test's. */
class EnvApiTest
{
    /**
     * A random walk on [-10, 10]: the action (in [-1, 1]) plus a draw from the env's stream moves it; it terminates
     * outside [-3, 3]. {@code nanAt} / {@code escapeAt} / {@code clockSeeded} break one rule each for the checker.
     */
    static final class Walk implements Env
    {
        final ResumableRandom random = new ResumableRandom(0);
        int nanAt = -1;
        int escapeAt = -1;
        int failAt = -1;
        boolean clockSeeded;
        boolean clockSteps;
        /** Later episodes start from a generator no reset(seed) seeds (an unseeded java.util.Random, say). */
        boolean clockStarts;
        long calls;
        double x;
        int t;

        @Override
        public Box observationSpace()
        {
            return Box.of(-10, 10, 1);
        }

        @Override
        public Space actionSpace()
        {
            return Box.of(-1, 1, 1);
        }

        @Override
        public void reset(final long seed, final float[] obs)
        {
            random.state(clockSeeded ? System.nanoTime() : seed);
            // A seeded reset starts the first episode (clockStarts then draws from the seeded generator).
            t = 0;
            reset(obs);
        }

        @Override
        public void reset(final float[] obs)
        {
            x = clockStarts && t > 0 ? new ResumableRandom(System.nanoTime()).nextDouble(-1, 1)
                : random.nextDouble(-1, 1);
            t = 0;
            obs[0] = (float)x;
        }

        @Override
        public void step(final float[] action, final float[] obs, final StepResult result)
        {
            // clockSteps: a drift from a count that no reset restores (as state kept outside the seeded generator).
            x += action[0] + random.nextDouble(-0.5, 0.5) + (clockSteps ? ++calls * 1e-3 : 0);
            t++;
            if (t == failAt)
            {
                throw new IllegalStateException("Walk broke at step " + t);
            }
            obs[0] = t == nanAt ? Float.NaN : t == escapeAt ? 11f : (float)x;
            result.set(-Math.abs(x), Math.abs(x) > 3, false);
        }

        @Override
        public long randomState()
        {
            return random.state();
        }

        @Override
        public void restoreRandomState(final long state)
        {
            random.state(state);
        }

        @Override
        public String toString()
        {
            return "Walk";
        }
    }

    @Test
    void spacesShouldCheckSampleAndNameWhatIsWrong()
    {
        final Discrete d = new Discrete(3);
        assertTrue(d.contains(new float[] {2}, 0));
        assertFalse(d.contains(new float[] {3}, 0));
        assertFalse(d.contains(new float[] {0.5f}, 0));
        assertEquals("action: expected an integer in [0, 3), got -1.0",
            assertThrows(IllegalArgumentException.class, () -> d.index(new float[] {-1}, 0)).getMessage());
        assertEquals("Discrete: expected n >= 1, got 0",
            assertThrows(IllegalArgumentException.class, () -> new Discrete(0)).getMessage());
        final Box box = new Box(new float[] {-1, 0, Float.NEGATIVE_INFINITY, 2},
            new float[] {1, Float.POSITIVE_INFINITY, 0, Float.POSITIVE_INFINITY}, 2, 2);
        assertEquals(4, box.flatSize());
        assertFalse(box.isBounded());
        final ResumableRandom random = new ResumableRandom(1);
        final float[] v = new float[4];
        for (int i = 0; i < 200; i++)
        {
            box.sample(random, v, 0);
            assertTrue(box.contains(v, 0), java.util.Arrays.toString(v));
        }
        assertFalse(box.contains(new float[] {0, Float.NaN, 0, 3}, 0));
        assertEquals("Box: entry 0: expected low <= high, got low 1.0 high 0.0", assertThrows(
            IllegalArgumentException.class, () -> new Box(new float[] {1}, new float[] {0}, 1)).getMessage());
        assertEquals("Box: shape [3] needs 3 bounds each, got 2 low and 2 high", assertThrows(
            IllegalArgumentException.class, () -> Box.of(0, 1, 2).equals(new Box(new float[2], new float[2], 3)))
            .getMessage());
    }

    @Test
    void aVectorEnvShouldSeedSeedPlusIAndResetOnTheSameStep()
    {
        try (VectorEnv envs = VectorEnv.sync(i -> new TimeLimit(new Walk(), 5), 3))
        {
            envs.reset(40);
            final float[] first = new float[1];
            for (int i = 0; i < 3; i++)
            {
                new Walk().reset(40 + i, first);
                assertEquals(first[0], envs.observations()[i], 0f, "env " + i + " is seeded with seed + i");
            }
            final float[] actions = new float[3];
            int ended = 0;
            for (int t = 1; t <= 5; t++)
            {
                envs.step(actions);
                for (int i = 0; i < 3; i++)
                {
                    if (envs.terminated()[i] || envs.truncated()[i])
                    {
                        ended++;
                        assertTrue(envs.truncated()[i] == (5 == t && !envs.terminated()[i]));
                    }
                }
            }
            assertTrue(ended >= 3, "every env ended once by step 5");
            assertEquals("actions: expected 3 x 1 = 3 floats, got 2",
                assertThrows(IllegalArgumentException.class, () -> envs.step(new float[2])).getMessage());
        }
        // The final observation is the one the step reached; the row holds the next episode's first.
        try (VectorEnv envs = VectorEnv.sync(i -> new TimeLimit(new Walk(), 1), 1))
        {
            envs.reset(7);
            final Walk mirror = new Walk();
            final float[] obs = new float[1];
            mirror.reset(7, obs);
            final StepResult result = new StepResult();
            mirror.step(new float[] {0.25f}, obs, result);
            final float last = obs[0];
            mirror.reset(obs);
            envs.step(new float[] {0.25f});
            assertTrue(envs.truncated()[0]);
            assertEquals(last, envs.finalObservations()[0], 0f);
            assertEquals(obs[0], envs.observations()[0], 0f);
            assertEquals(result.reward(), envs.rewards()[0], 0.0);
        }
    }

    @Test
    void withoutAutoResetAnEndedEnvShouldWaitForItsReset()
    {
        try (VectorEnv envs = VectorEnv.sync(i -> new TimeLimit(new Walk(), 1 + i), 2))
        {
            envs.autoReset(false);
            envs.reset(4);
            final long[] before = envs.randomStates();
            envs.step(new float[2]);
            assertTrue(envs.truncated()[0] && !envs.truncated()[1]);
            final float last = envs.observations()[0];
            assertEquals(last, envs.finalObservations()[0], 0f, "the row keeps the final observation");
            envs.step(new float[2]);
            assertTrue(envs.truncated()[0] && envs.truncated()[1], "the flags stay set");
            assertEquals(0.0, envs.rewards()[0], 0.0, "an ended env is not stepped");
            assertEquals(last, envs.observations()[0], 0f);
            final Walk probe = new Walk();
            probe.reset(4, new float[1]);
            probe.step(new float[1], new float[1], new StepResult());
            probe.step(new float[1], new float[1], new StepResult());
            assertTrue(probe.randomState() != before[0]);
            assertEquals(envs.randomStates()[0], ((Walk)((TimeLimit)envs.env(0)).unwrapped()).randomState());
            envs.reset();
            envs.step(new float[2]);
            assertTrue(envs.truncated()[0] && !envs.truncated()[1], "a reset starts the episodes again");
        }
    }

    @Test
    void threadedStepsShouldEqualInThreadStepsOnTheFactorysThreads()
    {
        final List<Thread> made = new ArrayList<>();
        final ThreadFactory factory = task ->
        {
            final Thread thread = new Thread(task, "host-env-" + made.size());
            thread.setDaemon(true);
            made.add(thread);
            return thread;
        };
        try (VectorEnv sync = VectorEnv.sync(i -> new TimeLimit(new Walk(), 50), 7);
            ThreadedVectorEnv threaded = new ThreadedVectorEnv(i -> new TimeLimit(new Walk(), 50), 7, 3, factory))
        {
            sync.reset(3);
            threaded.reset(3);
            final ResumableRandom random = new ResumableRandom(9);
            final float[] actions = new float[7];
            for (int t = 0; t < 2_000; t++)
            {
                for (int i = 0; i < actions.length; i++)
                {
                    actions[i] = (float)random.nextDouble(-1, 1);
                }
                sync.step(actions);
                threaded.step(actions);
                assertArrayEquals(sync.observations(), threaded.observations(), "step " + t);
                assertArrayEquals(sync.rewards(), threaded.rewards(), "step " + t);
                assertArrayEquals(sync.terminated(), threaded.terminated(), "step " + t);
                assertArrayEquals(sync.truncated(), threaded.truncated(), "step " + t);
            }
            assertEquals(3, made.size());
            assertArrayEquals(sync.randomStates(), threaded.randomStates());
        }
        for (final Thread thread : made)
        {
            assertFalse(thread.isAlive(), thread.getName() + " ended at close");
        }
    }

    @Test
    void aFailureOnAWorkerShouldBeRethrownOnTheCaller()
    {
        try (ThreadedVectorEnv envs = new ThreadedVectorEnv(i -> new Walk(), 4, 2, null))
        {
            envs.reset(1);
            ((Walk)envs.env(3)).failAt = 2;
            envs.step(new float[4]);
            final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> envs.step(new float[4]));
            assertEquals("Walk broke at step 2", ex.getMessage());
            // The workers live on: the next step runs (the broken env is past its failing step).
            envs.step(new float[4]);
        }
    }

    @Test
    void episodeStatisticsShouldKeepTheLastEpisode()
    {
        final EpisodeStatistics env = new EpisodeStatistics(new TimeLimit(new Walk(), 4));
        final float[] obs = new float[1];
        final StepResult result = new StepResult();
        env.reset(2, obs);
        assertTrue(Double.isNaN(env.lastReturn()));
        double sum = 0;
        int steps = 0;
        do
        {
            env.step(new float[] {0}, obs, result);
            sum += result.reward();
            steps++;
        }
        while (!result.done());
        assertEquals(1, env.episodes());
        assertEquals(sum, env.lastReturn(), 0.0);
        assertEquals(steps, env.lastLength());
        assertTrue(env.unwrapped() instanceof Walk);
    }

    @Test
    void theCheckerShouldNameTheEnvTheStepAndTheValue()
    {
        EnvChecker.check(new TimeLimit(new Walk(), 20), 5, 200);
        final Walk nan = new Walk();
        nan.nanAt = 2;
        assertEquals("Walk: step 1 after reset(seed=5): observation[0] = NaN is not finite", assertThrows(
            IllegalStateException.class, () -> EnvChecker.check(nan, 5, 50)).getMessage());
        final Walk escape = new Walk();
        escape.escapeAt = 1;
        assertEquals("Walk: step 0 after reset(seed=5): observation[0] = 11.0 is outside the observation space's "
            + "[-10.0, 10.0]", assertThrows(IllegalStateException.class, () -> EnvChecker.check(escape, 5, 50))
            .getMessage());
        final Walk clock = new Walk();
        clock.clockSeeded = true;
        final String message = assertThrows(IllegalStateException.class, () -> EnvChecker.check(clock, 5, 50))
            .getMessage();
        assertTrue(message.startsWith("Walk: reset(seed=5) twice gave observation[0] "), message);
        final Walk noisy = new Walk();
        noisy.clockSteps = true;
        final String stepMessage = assertThrows(IllegalStateException.class, () -> EnvChecker.check(noisy, 5, 50))
            .getMessage();
        assertTrue(stepMessage.startsWith("Walk: step 0 after reset(seed=5), run again with the same seed and "
            + "actions: observation[0] "), stepMessage);
        // Its first start seeded, the later ones not: the second run's first later start differs.
        final Walk starts = new Walk();
        starts.clockStarts = true;
        final String startMessage = assertThrows(IllegalStateException.class, () -> EnvChecker.check(new TimeLimit(
            starts, 5), 5, 50)).getMessage();
        assertTrue(startMessage.startsWith("TimeLimit") && startMessage.contains("step 4 after reset(seed=5), reset(), "
            + "run again with the same seed and actions: observation[0] "), startMessage);
        // An env without a toString of its own is named by its class, not Object's class@hash.
        final Walk inner = new Walk();
        inner.nanAt = 1;
        final Env plain = new Env()
        {
            @Override
            public Box observationSpace()
            {
                return inner.observationSpace();
            }

            @Override
            public Space actionSpace()
            {
                return inner.actionSpace();
            }

            @Override
            public void reset(final long seed, final float[] obs)
            {
                inner.reset(seed, obs);
            }

            @Override
            public void reset(final float[] obs)
            {
                inner.reset(obs);
            }

            @Override
            public void step(final float[] action, final float[] obs, final StepResult result)
            {
                inner.step(action, obs, result);
            }
        };
        assertEquals(plain.getClass().getName() + ": step 0 after reset(seed=5): observation[0] = NaN is not finite",
            assertThrows(IllegalStateException.class, () -> EnvChecker.check(plain, 5, 50)).getMessage());
    }

    /**
     * A {@link Walk} that records its close in {@code closed}; env {@code failing} throws from its close and env
     * {@code wide} has a wider observation space than the others.
     */
    private static IntFunction<Env> recorded(final List<Integer> closed, final int failing, final int wide)
    {
        return i -> new EnvWrapper(new Walk())
        {
            @Override
            public Box observationSpace()
            {
                return i == wide ? Box.of(-10, 10, 2) : super.observationSpace();
            }

            @Override
            public void close()
            {
                closed.add(i);
                if (i == failing)
                {
                    throw new IllegalStateException("env " + i + " failed to close");
                }
            }
        };
    }

    @Test
    void closeShouldCloseEveryEnvThoughOneThrowsAndThrowTheFirstFailure()
    {
        final List<Integer> closed = new CopyOnWriteArrayList<>();
        final VectorEnv sync = VectorEnv.sync(recorded(closed, 1, -1), 4);
        final IllegalStateException failure = assertThrows(IllegalStateException.class, sync::close);
        assertEquals("env 1 failed to close", failure.getMessage());
        assertEquals(List.of(0, 1, 2, 3), closed);

        closed.clear();
        final ThreadedVectorEnv threaded = new ThreadedVectorEnv(recorded(closed, 2, -1), 4, 2, null);
        assertThrows(IllegalStateException.class, threaded::close);
        assertEquals(List.of(0, 1, 2, 3), closed);
    }

    @Test
    void aRefusedVectorEnvShouldCloseTheEnvsItHadMade()
    {
        final List<Integer> closed = new CopyOnWriteArrayList<>();
        final IllegalArgumentException differ = assertThrows(IllegalArgumentException.class,
            () -> VectorEnv.sync(recorded(closed, -1, 2), 4));
        assertTrue(differ.getMessage().startsWith("env 2 (") && differ.getMessage().endsWith("): its spaces "
            + "(Box([-10.0, -10.0], [10.0, 10.0], [2]), Box([-1.0], [1.0], [1])) differ from env 0's "
            + "(Box([-10.0], [10.0], [1]), Box([-1.0], [1.0], [1]))"), differ.getMessage());
        assertEquals(List.of(3, 2, 1, 0), closed);

        // The factory fails at env 2: envs 0 and 1 are closed, env 1's close failure rides along as suppressed.
        closed.clear();
        final IntFunction<Env> made = recorded(closed, 1, -1);
        final IllegalStateException failed = assertThrows(IllegalStateException.class, () -> VectorEnv.sync(i -> {
            if (2 == i)
            {
                throw new IllegalStateException("no env 2");
            }
            return made.apply(i);
        }, 4));
        assertEquals("no env 2", failed.getMessage());
        assertEquals(List.of(1, 0), closed);
        assertEquals("env 1 failed to close", failed.getSuppressed()[0].getMessage());

        // A thread count out of range is refused before any env is made; a thread factory's failure closes them.
        closed.clear();
        assertThrows(IllegalArgumentException.class, () -> new ThreadedVectorEnv(recorded(closed, -1, -1), 4, 5, null));
        assertEquals(List.of(), closed);
        assertThrows(IllegalStateException.class, () -> new ThreadedVectorEnv(recorded(closed, -1, -1), 4, 2, task -> {
            throw new IllegalStateException("no threads here");
        }));
        assertEquals(List.of(0, 1, 2, 3), closed);
    }
}
