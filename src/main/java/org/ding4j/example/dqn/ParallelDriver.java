package org.ding4j.example.dqn;

import java.util.concurrent.atomic.AtomicLong;

import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.example.pipeline.OffPolicyRun;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.HookRegistry;
import org.ding4j.hook.LearnerHook;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.RunOutcome;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.NativeOwner;

/**
 * Parallel mode, the collector/learner hand-off: the collector and evaluator run on their own thread with their own
 * copy of the online net, the learner in {@code start()} on the calling thread. The learner publishes its
 * parameters into a flat tensor every {@code update_per_collect} updates and the collector copies them before each
 * collect, both under one lock (one memcpy each way). Each collect that leaves the buffer at least a batch full
 * grants {@code update_per_collect} updates, and the loader's source waits for a grant, so the ratio of updates to
 * env steps is the serial one. A new best evaluation is saved by the learner's thread at its next update (the
 * checkpoint then holds at most a few updates more than the evaluated net).
 */
final class ParallelDriver implements AutoCloseable
{
    private final OffPolicyRun<DqnBatch> run;
    private final DqnAlgorithm.Parts parts;
    private final BaseLearner<DqnBatch> learner;
    private final DqnPolicy policy;
    private final int nSample;
    private final int updatePerCollect;
    private final long maxEnvStep;
    private final long maxTrainIter;
    private final boolean prioritized;
    private final QNetwork actorNet;
    private final FlatParameters actorParams;
    private final NativeOwner natives = new NativeOwner("ParallelDriver");
    private final Tensor published;
    private final DqnBatch[] ring;
    private final Object lock = new Object();
    private final AtomicLong trainIter = new AtomicLong();
    private final Thread collectorThread = new Thread(this::collectLoop, "ding4j-collector");
    private int nextBatch;
    private long granted;
    private long issued;
    private volatile boolean stopping;
    private volatile boolean saveBestRequested;
    private volatile Throwable collectorFailure;

    ParallelDriver(final OffPolicyRun<DqnBatch> run, final DqnAlgorithm.Parts parts)
    {
        this.run = run;
        this.parts = parts;
        this.learner = run.learner();
        this.policy = parts.dqn();
        this.nSample = run.config().getInt("policy.collect.n_sample");
        this.updatePerCollect = run.config().getInt("policy.learn.update_per_collect");
        this.maxEnvStep = run.config().getLong("pipeline.max_env_step");
        this.maxTrainIter = run.config().getLong("pipeline.max_train_iter");
        this.prioritized = run.config().getBoolean("policy.other.replay_buffer.priority");
        final DqnPolicy.Settings settings = policy.settings();
        actorNet = new QNetwork(settings.obs(), settings.actions(), settings.hidden(), settings.dueling(),
            settings.activation());
        actorParams = FlatParameters.of(actorNet.module());
        if (policy.fusedUpdate())
        {
            // The collector thread's own copy, with its own fused forward (the learner's handle is not shared).
            parts.fuseActors(actorNet, actorParams);
        }
        published = natives.own(policy.parameters().group(0).values().clone());
        // Batches in flight at once: the loader's queue (2 with no workers), one being filled, one training.
        ring = new DqnBatch[6];
        for (int i = 0; i < ring.length; i++)
        {
            ring[i] = new DqnBatch(settings.batchSize(), settings.obs());
        }
        collectorThread.setDaemon(true);
    }

    /** @return how the learner's run ended */
    RunOutcome run()
    {
        learner.dataSource(size -> nextBatch());
        learner.setupDataloader();
        learner.registerHook(new PublishHook());
        learner.registerHook(new StartCollectorHook());
        final RunOutcome outcome;
        try
        {
            outcome = learner.start();
        }
        finally
        {
            stop();
            joinQuietly(collectorThread);
        }
        if (saveBestRequested)
        {
            saveBestRequested = false;
            run.saveBest();
        }
        if (null != collectorFailure)
        {
            throw new IllegalStateException("collector thread failed: " + collectorFailure, collectorFailure);
        }
        return outcome;
    }

    /**
     * start() runs before_run (a resume's load_ckpt among them) itself, so the collector starts from a before_run
     * hook ordered after load_ckpt: it then acts with the resumed net, counters and epsilon.
     */
    private final class StartCollectorHook extends LearnerHook
    {
        StartCollectorHook()
        {
            super("parallel_pipeline_start", HookRegistry.SIMPLIFIED_PRIORITY + 1, HookPosition.BEFORE_RUN);
        }

        @Override
        public void call(final HookContext context)
        {
            parts.resumeAt(Math.max(0, context.collectorEnvstep()));
            trainIter.set(context.lastIter());
            publish();
            collectorThread.start();
        }
    }

    /** After each update: priorities back to the buffer, parameters published, a requested best save, the limit. */
    private final class PublishHook extends LearnerHook
    {
        PublishHook()
        {
            super("parallel_pipeline", 0, HookPosition.AFTER_ITER);
        }

        @Override
        public void call(final HookContext context)
        {
            final long iter = context.lastIter();
            trainIter.set(iter);
            if (prioritized)
            {
                parts.buffer().updatePriorities(learner.priorities());
            }
            if (0 == iter % updatePerCollect)
            {
                synchronized (lock)
                {
                    publish();
                }
            }
            if (saveBestRequested)
            {
                saveBestRequested = false;
                run.saveBest();
            }
            if (iter >= maxTrainIter)
            {
                stop();
            }
        }
    }

    private void publish()
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            published.copy_(policy.parameters().group(0).values());
        }
    }

    private DqnBatch nextBatch() throws InterruptedException
    {
        final DqnBatch batch = ring[nextBatch];
        nextBatch = (nextBatch + 1) % ring.length;
        synchronized (lock)
        {
            while (!stopping && issued >= granted)
            {
                lock.wait();
            }
            if (stopping)
            {
                return batch;
            }
            issued++;
            // The collector may be waiting for the learner to use up its grant.
            lock.notifyAll();
        }
        parts.buffer().sample(batch);
        return batch;
    }

    private void collectLoop()
    {
        try
        {
            final Collector collector = parts.collector();
            while (!stopping)
            {
                synchronized (lock)
                {
                    try (NoGradGuard noGrad = new NoGradGuard())
                    {
                        actorParams.group(0).values().copy_(published);
                    }
                }
                if (run.evaluateIfDue(trainIter.get(), () -> parts.evaluate(actorNet), () -> saveBestRequested = true))
                {
                    break;
                }
                collector.collect(actorNet, nSample);
                learner.collectorEnvstep(collector.envsteps());
                if (parts.buffer().size() >= ring[0].size())
                {
                    synchronized (lock)
                    {
                        granted += updatePerCollect;
                        lock.notifyAll();
                    }
                }
                if (collector.envsteps() >= maxEnvStep)
                {
                    break;
                }
                // Keep at most one collect's grant ahead, as serial does, so the collector cannot run away.
                synchronized (lock)
                {
                    while (!stopping && granted - issued > updatePerCollect)
                    {
                        lock.wait();
                    }
                }
            }
        }
        catch (final Throwable t)
        {
            collectorFailure = t;
        }
        finally
        {
            stop();
        }
    }

    private void stop()
    {
        synchronized (lock)
        {
            stopping = true;
            lock.notifyAll();
        }
        learner.stop();
    }

    private static void joinQuietly(final Thread thread)
    {
        if (Thread.State.NEW == thread.getState())
        {
            return;
        }
        try
        {
            thread.join();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close()
    {
        for (final DqnBatch batch : ring)
        {
            batch.close();
        }
        natives.close();
        actorParams.close();
        actorNet.close();
    }
}
