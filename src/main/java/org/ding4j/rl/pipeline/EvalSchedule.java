package org.ding4j.rl.pipeline;

import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.checkpoint.StateFields;

/**
 * When to evaluate and what the evaluations gave, for every algorithm's pipeline: an evaluation is due at update 0
 * and every {@code eval_freq} updates after the last one; a new best mean return triggers the best-checkpoint save;
 * a mean return at or above {@code stop_value} solves the run. The state a checkpoint carries ({@link #state}) keeps
 * a resumed run's schedule and best return, so only a real improvement replaces {@code ckpt_best}. Evaluated by one
 * thread (the training thread, or a parallel mode's collector thread); its state may be read for a checkpoint from
 * the learner's thread.
 */
public final class EvalSchedule
{
    private final long evalFreq;
    private final double stopValue;
    // Volatile: in parallel mode the collector thread evaluates while the learner's thread saves the state.
    private volatile long lastEvalIter = -1;
    private volatile double bestReturn = Double.NEGATIVE_INFINITY;
    private volatile double lastReturn = Double.NaN;
    private volatile boolean solved;

    /**
     * @param evalFreq  updates between evaluations, >= 1
     * @param stopValue the mean return that solves the run
     */
    public EvalSchedule(final long evalFreq, final double stopValue)
    {
        if (evalFreq < 1)
        {
            throw new IllegalArgumentException("eval_freq: expected >= 1, got " + evalFreq);
        }
        this.evalFreq = evalFreq;
        this.stopValue = stopValue;
    }

    /**
     * @param trainIter updates so far
     * @return whether an evaluation is due now (and marks it taken)
     */
    public boolean due(final long trainIter)
    {
        if (trainIter == lastEvalIter || (trainIter - lastEvalIter < evalFreq && lastEvalIter >= 0))
        {
            return false;
        }
        lastEvalIter = trainIter;
        return true;
    }

    /**
     * Records an evaluation.
     *
     * @param meanReturn its mean return
     * @param onNewBest  runs when it beats every earlier one
     * @return whether the run is solved
     */
    public boolean record(final double meanReturn, final Runnable onNewBest)
    {
        lastReturn = meanReturn;
        if (meanReturn > bestReturn)
        {
            bestReturn = meanReturn;
            onNewBest.run();
        }
        solved = meanReturn >= stopValue;
        return solved;
    }

    /** @return what a resume needs: the best return and the schedule */
    public Map<String, Object> state()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("best_eval_return", bestReturn);
        state.put("last_eval_iter", lastEvalIter);
        state.put("last_eval_return", lastReturn);
        return state;
    }

    /**
     * @param state what {@link #state()} gave in the checkpoint a run resumes from ({@code last_eval_return} may be
     *              missing: TD3/SAC checkpoints before it was saved)
     * @throws IllegalArgumentException naming the key if a value is missing, of the wrong type or out of range (a
     *     NaN or +infinite best return would keep ckpt_best from ever being replaced)
     */
    public void restore(final Map<?, ?> state)
    {
        final double best = StateFields.number("pipeline state", state, "best_eval_return");
        final long at = StateFields.integer("pipeline state", state, "last_eval_iter");
        final double lastValue = state.containsKey("last_eval_return")
            ? StateFields.number("pipeline state", state, "last_eval_return") : Double.NaN;
        if (Double.isNaN(best) || Double.POSITIVE_INFINITY == best)
        {
            throw new IllegalArgumentException("pipeline state: best_eval_return must be a finite number (or -inf "
                + "before the first evaluation), got " + best);
        }
        if (at < -1)
        {
            throw new IllegalArgumentException("pipeline state: last_eval_iter must be >= -1, got " + at);
        }
        this.bestReturn = best;
        this.lastEvalIter = at;
        this.lastReturn = lastValue;
    }

    /**
     * Raises the best return to {@code best} when that is higher (a resume in a folder whose {@code ckpt_best} holds
     * a better evaluation than the checkpoint it resumed from), so that only a better evaluation replaces it.
     *
     * @param best a best return recorded elsewhere; a non-finite value changes nothing
     */
    public void atLeast(final double best)
    {
        if (Double.isFinite(best) && best > bestReturn)
        {
            bestReturn = best;
        }
    }

    /** @return the best mean return so far */
    public double bestReturn()
    {
        return bestReturn;
    }

    /** @return the last evaluation's mean return (NaN before the first) */
    public double lastReturn()
    {
        return lastReturn;
    }

    /** @return whether an evaluation reached the stop value */
    public boolean solved()
    {
        return solved;
    }

    /** @return the stop value */
    public double stopValue()
    {
        return stopValue;
    }
}
