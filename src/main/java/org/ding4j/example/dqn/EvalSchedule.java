package org.ding4j.example.dqn;

/**
 * When to evaluate and what the evaluations gave: every {@code eval_freq} updates (and at update 0), greedy on
 * the evaluator's seeded starts; a new best mean return triggers the best-checkpoint save; a mean return at or
 * above {@code stop_value} solves the run. Evaluated by one thread (the training thread in serial mode, the
 * collector thread in parallel mode); its state may be read for a checkpoint from the learner's thread.
 */
final class EvalSchedule implements AutoCloseable
{
    private final Evaluator evaluator;
    private final long evalFreq;
    private final double stopValue;
    // Volatile: in parallel mode the collector thread evaluates while the learner's thread saves the state.
    private volatile long lastEvalIter = -1;
    private volatile double bestReturn = Double.NEGATIVE_INFINITY;
    private volatile double lastReturn = Double.NaN;
    private volatile boolean solved;

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

    /** @return what a resume needs: the best return (so only a real improvement replaces ckpt_best) and the schedule */
    java.util.Map<String, Object> state()
    {
        final java.util.Map<String, Object> state = new java.util.LinkedHashMap<>();
        state.put("best_eval_return", bestReturn);
        state.put("last_eval_iter", lastEvalIter);
        state.put("last_eval_return", lastReturn);
        return state;
    }

    /**
     * @param state what {@link #state()} gave in the checkpoint a run resumes from
     * @throws IllegalArgumentException naming the key if a value is missing or of the wrong type
     */
    void restore(final java.util.Map<String, Object> state)
    {
        if (!(state.get("best_eval_return") instanceof Double best) || !(state.get("last_eval_iter") instanceof Long last)
            || !(state.get("last_eval_return") instanceof Double lastReturn))
        {
            throw new IllegalArgumentException("pipeline state: expected best_eval_return, last_eval_return (floats) "
                + "and last_eval_iter (an int), got " + state);
        }
        this.bestReturn = best;
        this.lastEvalIter = last;
        this.lastReturn = lastReturn;
    }

    /** @return the evaluator, for wiring its forward */
    Evaluator evaluator()
    {
        return evaluator;
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
