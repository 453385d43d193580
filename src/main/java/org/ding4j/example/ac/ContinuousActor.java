package org.ding4j.example.ac;

import org.ding4j.env.ResumableRandom;

/** What a collector and an evaluator need of a continuous-action policy: actions for a batch of observations. */
public interface ContinuousActor
{
    /**
     * @param obs     row-major {@code [rows, obsWidth]} observations
     * @param rows    how many rows to act on
     * @param actions receives row-major {@code [rows, actionWidth]} actions in [-1, 1]
     * @param explore the exploration stream (collection), or null for the deterministic action (evaluation)
     */
    void act(float[] obs, int rows, float[] actions, ResumableRandom explore);

    /** @return observation width */
    int obsWidth();

    /** @return action width */
    int actionWidth();
}
