package org.ding4j.learner;

import java.util.List;

/** A {@link TrainingLoop} that always has a batch: it runs until the learner is stopped or closed. */
final class EndlessLoop implements TrainingLoop
{
    private final BaseLearner<Object> learner;
    private final Runnable inUpdate;

    /**
     * @param learner  the learner to train
     * @param inUpdate runs at the start of each update, before {@code train}
     */
    EndlessLoop(final BaseLearner<Object> learner, final Runnable inUpdate)
    {
        this.learner = learner;
        this.inUpdate = inUpdate;
    }

    @Override
    public boolean prepare()
    {
        return true;
    }

    @Override
    public void update()
    {
        inUpdate.run();
        learner.train(List.of());
    }
}
