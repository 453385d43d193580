package org.ding4j.jmx;

import java.util.Map;

/**
 * A running learner as JMX sees it: attributes read without stopping it, operations carried out by its training
 * thread between two updates. Latencies are nanoseconds over every update so far (HdrHistogram, 1% resolution).
 */
public interface LearnerMXBean
{
    /** @return the experiment name */
    String getExperiment();

    /** @return the learner's instance name */
    String getInstanceName();

    /** @return this process's rank */
    int getRank();

    /** @return the job's world size */
    int getWorldSize();

    /** @return completed updates */
    long getUpdates();

    /** @return the collector env step of the last update (-1 if unknown) */
    long getEnvSteps();

    /** @return every log var written so far with its latest value (e.g. {@code cur_lr}, {@code total_loss}) */
    Map<String, Double> getLastValues();

    /** @return updates whose {@code train_time} was recorded */
    long getTrainTimeCount();

    /** @return median {@code train_time}, ns */
    long getTrainTimeP50Nanos();

    /** @return 99th percentile {@code train_time}, ns */
    long getTrainTimeP99Nanos();

    /** @return 99.9th percentile {@code train_time}, ns */
    long getTrainTimeP999Nanos();

    /** @return median {@code data_time} (the wait for a batch in {@code start()}), ns */
    long getDataTimeP50Nanos();

    /** @return 99th percentile {@code data_time}, ns */
    long getDataTimeP99Nanos();

    /** @return 99.9th percentile {@code data_time}, ns */
    long getDataTimeP999Nanos();

    /** @return whether a pause is asked for */
    boolean isPaused();

    /** @return whether the training thread waits in a pause now */
    boolean isWaiting();

    /**
     * Saves {@code iteration_N.pth.tar} (rank 0) at the next update boundary and waits for it (30 s at most).
     *
     * @return the file written
     * @throws Exception naming why nothing was saved: no update boundary in time, a failed write, another rank
     */
    String saveCheckpoint() throws Exception;

    /** Pauses before the next update (the update in flight finishes). */
    void pause();

    /** Ends a pause. */
    void resume();

    /** Asks a running {@code run()}/{@code start()} to end after the update in flight; hooks and logs stay open. */
    void stop();
}
