package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.learner.BaseLearner;
import org.ding4j.rl.pipeline.OffPolicyRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that cancels its training thread ({@code Thread.interrupt()}, {@code Future.cancel(true)}) stops
 * the run as SIGINT does: the update in flight ends, the interrupt checkpoint and the summary are written whole, and
 * the thread's interrupt status is set again when {@code run} returns (before, the interrupt closed the file
 * channels the saves wrote through, and the run lost its summary and checkpoints); and {@code stop()} ends a run from
 * any thread.
 */
@org.junit.jupiter.api.Timeout(value = 300, unit = TimeUnit.SECONDS)
class InterruptedRunTest
{
    @TempDir
    Path dir;

    /** A run only a stop ends: no stop value it reaches, no step limit it meets in a test's time. */
    private Config endless(final String name)
    {
        return Config.empty().with("exp_name", dir.resolve(name).toString()).with("env.stop_value", 1e9)
            .with("pipeline.max_env_step", 100_000_000L);
    }

    /** Serial, and parallel: there a collector thread acts on batches the run frees once it has waited for it. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"serial", "parallel"})
    void anInterruptFromAnotherThreadStopsTheRunWithItsFilesSaved(final String mode) throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(endless("cancelled_" + mode)
            .with("pipeline.mode", mode));
        final CountDownLatch evaluated = new CountDownLatch(1);
        final AtomicReference<Object> result = new AtomicReference<>();
        final AtomicBoolean statusAfter = new AtomicBoolean();
        final Thread trainer = trainer(pipeline, progress -> evaluated.countDown(), result, statusAfter);
        assertTrue(evaluated.await(120, TimeUnit.SECONDS), "the run evaluated once");
        trainer.interrupt();
        trainer.join(TimeUnit.SECONDS.toMillis(120));
        assertFalse(trainer.isAlive(), "the run ended");
        final OffPolicyRun.Summary summary = assertInstanceOf(OffPolicyRun.Summary.class, result.get(),
            () -> String.valueOf(result.get()));
        assertTrue(summary.interrupted() && null == summary.error(), summary.toString());
        assertTrue(statusAfter.get(), "the interrupt status is set again when run returns");
        assertSaved(Path.of(pipeline.config().getString("exp_name")));
    }

    /** "Interrupt it until it exits", a common shutdown: any number of interrupts is one stop, its saves whole. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"serial", "parallel"})
    void interruptsUntilTheThreadEndsStopTheRunOnceWithItsFilesSaved(final String mode) throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(endless("storm_" + mode).with("pipeline.mode", mode));
        final CountDownLatch evaluated = new CountDownLatch(1);
        final AtomicReference<Object> result = new AtomicReference<>();
        final Thread trainer = trainer(pipeline, progress -> evaluated.countDown(), result, new AtomicBoolean());
        assertTrue(evaluated.await(120, TimeUnit.SECONDS), "the run evaluated once");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (trainer.isAlive() && System.nanoTime() < deadline)
        {
            trainer.interrupt();
            // Paces the interrupts (the loop ends when the thread does, not when this wait does).
            trainer.join(1);
        }
        assertFalse(trainer.isAlive(), "the run ended");
        final OffPolicyRun.Summary summary = assertInstanceOf(OffPolicyRun.Summary.class, result.get(),
            () -> String.valueOf(result.get()));
        assertTrue(summary.interrupted() && null == summary.error(), summary.toString());
        assertSaved(Path.of(pipeline.config().getString("exp_name")));
    }

    /** An env that restores an interrupt it caught, on the parallel mode's collector thread: a failure, not a spin. */
    @Test
    void anInterruptedCollectorFailsTheRunNamingIt() throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(endless("collector").with("pipeline.mode", "parallel")
            .with("env.type", InterruptingCartPole.class.getName()));
        final IllegalStateException ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> pipeline.run(progress -> { }));
        assertTrue(ex.getMessage().contains("the collector thread was interrupted"), ex.getMessage());
        assertTrue(Files.readString(Path.of(pipeline.config().getString("exp_name")).resolve("summary.json"))
            .contains("the collector thread was interrupted"));
    }

    /** CartPole whose 50th step restores an interrupt on its thread, as code that caught one should. */
    public static final class InterruptingCartPole extends org.ding4j.env.EnvWrapper
    {
        private int steps;

        /** A CartPole. */
        public InterruptingCartPole()
        {
            super(new org.ding4j.rl.envs.CartPole());
        }

        @Override
        public void step(final float[] action, final float[] obs, final org.ding4j.env.StepResult result)
        {
            if (50 == ++steps)
            {
                Thread.currentThread().interrupt();
            }
            super.step(action, obs, result);
        }
    }

    @Test
    void aThreadInterruptedBeforeTheRunStopsAtOnceWithItsFilesSaved() throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(endless("early"));
        Thread.currentThread().interrupt();
        final OffPolicyRun.Summary summary;
        try
        {
            summary = pipeline.run(progress -> { });
        }
        finally
        {
            assertTrue(Thread.interrupted(), "the interrupt status is set again when run returns");
        }
        assertTrue(summary.interrupted() && null == summary.error(), summary.toString());
        assertEquals(0, summary.trainIter(), "stopped before its first update");
        assertSaved(Path.of(pipeline.config().getString("exp_name")));
    }

    @Test
    void stopEndsTheRunFromAnotherThreadOrBeforeItStarts() throws Exception
    {
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(endless("stopped"));
        final AtomicReference<Object> result = new AtomicReference<>();
        final Thread trainer = trainer(pipeline, progress -> pipeline.stop(), result, new AtomicBoolean());
        trainer.join(TimeUnit.SECONDS.toMillis(120));
        assertFalse(trainer.isAlive(), "the run ended");
        final OffPolicyRun.Summary stopped = assertInstanceOf(OffPolicyRun.Summary.class, result.get(),
            () -> String.valueOf(result.get()));
        assertTrue(stopped.stopped() && !stopped.interrupted(), stopped.toString());
        assertTrue(Files.readString(Path.of(pipeline.config().getString("exp_name")).resolve("summary.json"))
            .contains("\"stopped\" : true"));

        final OffPolicyPipeline early = new OffPolicyPipeline(endless("stopped_early"));
        early.stop();
        final OffPolicyRun.Summary summary = early.run(progress -> { });
        assertTrue(summary.stopped() && 0 == summary.trainIter(), summary.toString());
    }

    /**
     * @return a started thread that runs the pipeline, leaving its summary (or what it threw) in {@code result} and
     *     its interrupt status after {@code run} returned in {@code statusAfter}
     */
    private static Thread trainer(final OffPolicyPipeline pipeline,
        final java.util.function.Consumer<OffPolicyRun.Progress> progress, final AtomicReference<Object> result,
        final AtomicBoolean statusAfter)
    {
        final Thread trainer = new Thread(() -> {
            try
            {
                result.set(pipeline.run(progress));
            }
            catch (final Throwable t)
            {
                result.set(t);
            }
            statusAfter.set(Thread.currentThread().isInterrupted());
        }, "trainer");
        trainer.start();
        return trainer;
    }

    private static void assertSaved(final Path exp) throws Exception
    {
        assertTrue(Files.readString(exp.resolve("summary.json")).contains("\"interrupted\" : true"));
        final Map<String, Object> state = new TorchCheckpointIO().read(exp.resolve("ckpt")
            .resolve(BaseLearner.INTERRUPT_CHECKPOINT));
        assertTrue(state.containsKey("model"), state.keySet().toString());
        assertNull(findTemporary(exp), "no temporary file left");
    }

    private static Path findTemporary(final Path exp) throws Exception
    {
        try (var files = Files.walk(exp))
        {
            return files.filter(org.ding4j.checkpoint.AtomicFiles::isTemporary).findFirst().orElse(null);
        }
    }
}
