package org.ding4j.rl.pipeline;

/**
 * What an off-policy algorithm's run offers {@link SerialLoop}: its replay, its collector, its evaluation and its
 * update, each on the training thread.
 */
public interface OffPolicyRounds
{
    /** @return whether a batch was sampled from the replay (false while it holds fewer than a batch) */
    boolean sample();

    /** @return whether a batch could be sampled now without collecting (the buffer only grows within a round) */
    boolean canSample();

    /**
     * Collects at least {@code transitions} transitions with the current policy into the replay.
     *
     * @param transitions how many
     */
    void collect(int transitions);

    /** @return env steps collected so far (a resumed run's included) */
    long envSteps();

    /** Continues a resumed run's env-step count (called once, before the first collect, after before_run). */
    void resume();

    /**
     * Evaluates when due.
     *
     * @param trainIter updates so far
     * @return whether the run is solved (then it ends)
     */
    boolean evaluateIfDue(long trainIter);

    /** One update on the sampled batch (and whatever the algorithm feeds back, as priorities). */
    void update();
}
