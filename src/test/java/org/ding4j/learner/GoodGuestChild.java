package org.ding4j.learner;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.torch.Threads;
import sun.misc.Signal;

/**
 * The host process of {@link GoodGuestTest}: it installs its own SIGTERM handler and shutdown hook and passes its own
 * thread factory, then trains a learner (data loader workers, log reporter, TensorBoard writer) and closes it, and
 * reports what ding4j left behind: threads, shutdown hooks, the SIGTERM handler. Then it raises SIGTERM, which its
 * own handler must get. Run with {@code --add-opens java.base/java.lang=ALL-UNNAMED} (it reads the hook table).
 */
public final class GoodGuestChild
{
    private GoodGuestChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final CountDownLatch term = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), signal -> {
            System.out.println("host handler got SIGTERM");
            term.countDown();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("host hook ran"), "host-hook"));
        final AtomicInteger made = new AtomicInteger();
        Threads.threadFactory(task -> {
            final Thread thread = new Thread(task, "host-made-" + made.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        Threads.configure();
        try (BaseLearner learner = new BaseLearner(ConfigFiles.override(Config.empty(), List.of("train_iterations=20",
            "dataloader.num_workers=2", "dataloader.chunk_size=2", "hook.log_show_after_iter=5")),
            new CountingPolicy(), null, DistInfo.single(), Path.of(args[0]).toString(), "learner"))
        {
            learner.dataSource(CountingPolicy::chunk);
            learner.setupDataloader();
            learner.start();
            System.out.println("trained " + learner.trainIter());
        }
        System.out.println("threads made by the host's factory " + made.get());
        final List<String> alive = new ArrayList<>();
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            if (thread.getName().startsWith("ding4j") || thread.getName().startsWith("host-made"))
            {
                // A pool worker may still be unwinding when close() returns; it must end, within a bound.
                thread.join(TimeUnit.SECONDS.toMillis(30));
                if (thread.isAlive())
                {
                    alive.add(thread.getName());
                }
            }
        }
        System.out.println("ding4j threads alive after close " + alive);
        final java.lang.reflect.Field hooks = Class.forName("java.lang.ApplicationShutdownHooks")
            .getDeclaredField("hooks");
        hooks.setAccessible(true);
        final List<String> hookNames = new ArrayList<>();
        for (final Object hook : ((Map<?, ?>)hooks.get(null)).keySet())
        {
            hookNames.add(((Thread)hook).getName());
        }
        System.out.println("shutdown hooks " + hookNames);
        Signal.raise(new Signal("TERM"));
        System.out.println("host handler answered " + term.await(30, TimeUnit.SECONDS));
        System.exit(0);
    }
}
