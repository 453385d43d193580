package org.ding4j.example.cartpole;

import org.ding4j.example.dqn.QNetwork;

/**
 * When to evaluate and what the evaluations gave: every {@code eval_freq} updates (and at update 0), greedy on
 * the evaluator's seeded starts; a new best mean return triggers the best-checkpoint save; a mean return at or
 * above {@code stop_value} solves the run. Used by one thread at a time (the training thread in serial mode, the
 * collector thread in parallel mode).
 */
final class EvalSchedule implements AutoCloseable
{
    private final Evaluator evaluator;
    private final long evalFreq;
    private final double stopValue;
    private long lastEvalIter = -1;
    private double bestReturn = Double.NEGATIVE_INFINITY;
    private double lastReturn = Double.NaN;
    private boolean solved;

    EvalSchedule(final Evaluator evaluator, final long evalFreq, final double stopValue)
    {
        this.evaluator = evaluator;
        this.evalFreq = evalFreq;
        this.stopValue = stopValue;
    }

    /**
     * @param trainIter updates so far
     * @return whether an evaluation is due now (and marks it taken)
     */
    boolean due(final long trainIter)
    {
        if (trainIter == lastEvalIter || (trainIter - lastEvalIter < evalFreq && lastEvalIter >= 0))
        {
            return false;
        }
        lastEvalIter = trainIter;
        return true;
    }

    /**
     * @param net       the net to evaluate
     * @param onNewBest runs when the mean return beats every earlier one
     * @return whether the run is solved
     */
    boolean evaluate(final QNetwork net, final Runnable onNewBest)
    {
        lastReturn = evaluator.evaluate(net).meanReturn();
        if (lastReturn > bestReturn)
        {
            bestReturn = lastReturn;
            onNewBest.run();
        }
        solved = lastReturn >= stopValue;
        return solved;
    }

    double bestReturn()
    {
        return bestReturn;
    }

    double lastReturn()
    {
        return lastReturn;
    }

    boolean solved()
    {
        return solved;
    }

    double stopValue()
    {
        return stopValue;
    }

    @Override
    public void close()
    {
        evaluator.close();
    }
}
