package org.ding4j.learner;

import org.ding4j.data.AsyncDataLoader;

/**
 * {@code start()}'s loop: each update's batch from the data loader, its wait recorded as {@code data_time}, the
 * collector's env step kept as the collector side sets it ({@link BaseLearner#collectorEnvstep(long)}).
 *
 * @param <B> the batch type
 */
final class LoaderLoop<B> implements TrainingLoop
{
    private final BaseLearner<B> learner;
    private final UpdateCycle cycle;
    private final AsyncDataLoader<B> loader;
    /** The loader's wake-ups before this run (a stop() that ended the last one) are not this run's. */
    private final long wakeUps;
    private B batch;

    LoaderLoop(final BaseLearner<B> learner, final UpdateCycle cycle, final AsyncDataLoader<B> loader)
    {
        this.learner = learner;
        this.cycle = cycle;
        this.loader = loader;
        this.wakeUps = loader.wakeUps();
    }

    @Override
    public boolean prepare()
    {
        final long waitStart = System.nanoTime();
        batch = loader.next(wakeUps);
        cycle.dataWait(System.nanoTime() - waitStart);
        return null != batch;
    }

    /** A queued batch is what the next {@code next()} returns, woken or not. */
    @Override
    public boolean nextReady()
    {
        return loader.ready();
    }

    @Override
    public void update()
    {
        learner.train(batch, cycle.collectorEnvstep());
    }
}
