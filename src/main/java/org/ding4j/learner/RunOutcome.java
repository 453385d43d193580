package org.ding4j.learner;

/** How {@link BaseLearner#run} (and so {@code start()}) ended when it did not throw. */
public enum RunOutcome
{
    /** {@code train_iterations} updates ran, or the loop had nothing more to train. */
    DONE,
    /** {@code stop()} or {@code close()} asked it to end. */
    STOPPED,
    /**
     * SIGINT/SIGTERM or an interrupt of the training thread (on any rank): rank 0 saved
     * {@link BaseLearner#INTERRUPT_CHECKPOINT}.
     */
    INTERRUPTED
}
