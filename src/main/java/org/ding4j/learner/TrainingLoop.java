package org.ding4j.learner;

/**
 * One kind of training, as {@link BaseLearner#run} drives it: before each update the loop gets ready
 * ({@link #prepare()}: take a batch, collect, evaluate), then all ranks agree whether to go on, then the loop does
 * the update ({@link #update()}: one {@code learner.train(...)} call). The learner's {@code start()} is the loop over
 * its data loader; the DQN example's serial pipeline is another. Called on the training thread only.
 */
public interface TrainingLoop
{
    /**
     * Gets ready for the next update. Runs before the ranks' stop vote, so it must not issue collectives that
     * depend on the vote.
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
}
