package org.ding4j.learner;

/**
 * One kind of training, as {@link BaseLearner#run} drives it: before each update the loop gets ready
 * ({@link #prepare()}: take a batch, collect, evaluate), then all ranks agree whether to go on, then the loop does
 * the update ({@link #update()}: one {@code learner.train(...)} call). The learner's {@code start()} is the loop over
 * its data loader; the algorithms' serial pipeline is another. Called on the training thread only.
 */
public interface TrainingLoop
{
    /**
     * Gets ready for the next update. Runs before the ranks' stop vote (or after it, when the vote rode on the last
     * update's log reduce: {@link #nextReady()}), so it must not issue collectives that depend on the vote.
     *
     * @return false when this rank has nothing more to train (data ran dry, a goal or limit was reached)
     * @throws Exception any failure; the run saves the exception checkpoint and rethrows it (a checked exception
     *                   wrapped in an IllegalStateException)
     */
    boolean prepare() throws Exception;

    /**
     * Does the update that {@link #prepare()} got ready for.
     *
     * @throws Exception any failure; the run saves the exception checkpoint and rethrows it (a checked exception
     *                   wrapped in an IllegalStateException)
     */
    void update() throws Exception;

    /**
     * Asked during an update (in its {@code log_reduce}, on the training thread): whether the next {@link #prepare()}
     * will surely return true. A distributed run then lets the stop vote for the next update ride on this update's
     * log reduce (one round trip fewer) and calls {@link #prepare()} after the ranks agreed to go on, so a true that
     * turns out wrong fails the run. False (the default) keeps the separate vote after {@code prepare()}.
     *
     * @return true only if the next prepare cannot come back empty
     */
    default boolean nextReady()
    {
        return false;
    }
}
