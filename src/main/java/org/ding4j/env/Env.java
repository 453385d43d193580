package org.ding4j.env;

/**
 * One environment, with Gymnasium's contract ({@code Env.reset(seed)} / {@code Env.step(action)}) in Java's idiom:
 * the caller owns the arrays, so a step allocates nothing.
 * <ul>
 * <li>{@link #reset(long, float[])} re-seeds the environment's generator and starts an episode (Gymnasium's
 * {@code reset(seed=...)}); {@link #reset(float[])} starts the next episode from the generator as it stands.</li>
 * <li>{@link #step} writes the next observation and the outcome: the reward, {@code terminated} (the task's own
 * end, after which nothing is bootstrapped) and {@code truncated} (cut from outside, as a time limit, after which a
 * learner still bootstraps from the next observation). After either, the caller resets.</li>
 * <li>Observations lie in {@link #observationSpace()}, actions in {@link #actionSpace()}; a {@link Discrete} action
 * is one float holding its index.</li>
 * </ul>
 * {@link EnvChecker} checks an implementation against these rules. Not thread-safe: one thread steps an env at a
 * time ({@link VectorEnv}s step several on worker threads, each env on one).
 */
public interface Env extends AutoCloseable
{
    /** @return the space every observation lies in */
    Box observationSpace();

    /** @return the space the actions lie in */
    Space actionSpace();

    /**
     * Re-seeds the environment's generator and starts an episode.
     *
     * @param seed the seed: the same seed and the same actions give the same trajectory
     * @param obs  receives the first observation ({@code observationSpace().flatSize()} floats)
     */
    void reset(long seed, float[] obs);

    /**
     * Starts the next episode from the generator as it stands.
     *
     * @param obs receives the first observation
     */
    void reset(float[] obs);

    /**
     * One step.
     *
     * @param action the action ({@code actionSpace().flatSize()} floats)
     * @param obs    receives the next observation (on a terminal or truncated step, the final one)
     * @param result receives the reward and the {@code terminated} and {@code truncated} flags
     * @throws IllegalArgumentException for an action outside the action space, naming it
     */
    void step(float[] action, float[] obs, StepResult result);

    /**
     * @return the state of the generator the episodes' starts are drawn from, for a checkpoint; an env that draws
     *     nothing may keep the default (0)
     */
    default long randomState()
    {
        return 0L;
    }

    /**
     * Continues the generator from a state of {@link #randomState()} (a resumed run then draws what the run it
     * resumes would have drawn); an env that draws nothing may keep the default, which ignores it.
     *
     * @param state the saved state
     */
    default void restoreRandomState(final long state)
    {
    }

    /** Releases what the environment holds; the default holds nothing. */
    @Override
    default void close()
    {
    }
}
