package org.ding4j.rl.pipeline;

import org.ding4j.env.ResumableRandom;

/**
 * What a collector and an evaluator need of a policy: actions for a batch of observations, for a {@code Box} action
 * space in [-1, 1] (scaled onto its bounds by {@link ActionScale} where the env is stepped), for a {@code Discrete}
 * one the action's index.
 */
public interface Actor
{
    /**
     * @param obs     row-major {@code [rows, obsWidth]} observations
     * @param rows    how many rows to act on
     * @param actions receives row-major {@code [rows, actionWidth]} actions: in [-1, 1], or an index
     * @param explore the exploration stream (collection), or null for the deterministic action (evaluation)
     */
    void act(float[] obs, int rows, float[] actions, ResumableRandom explore);

    /** @return observation width */
    int obsWidth();

    /** @return action width */
    int actionWidth();
}
