package org.ding4j.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.Threads;

import org.junit.jupiter.api.Test;

class AsyncDataLoaderTest
{
    @Test
    void shouldDeliverBatchesInOrderWithoutWorkers()
    {
        final AtomicLong counter = new AtomicLong();
        try (AsyncDataLoader<List<Long>> loader = new AsyncDataLoader<>(
            size -> List.of(counter.getAndIncrement()), 4, null, 4, 0))
        {
            assertEquals(2, loader.capacity());
            for (long i = 0; i < 50; i++)
            {
                assertEquals(List.of(i), loader.next());
            }
        }
    }

    @Test
    void shouldCallTheSourceOncePerBatchAndRunItsJobsOnTheWorkersInOrder()
    {
        // DI-engine: get_data(batch_size) once per batch; its callables are split into chunk_size jobs per worker.
        final AtomicLong calls = new AtomicLong();
        final Set<String> sourceThreads = ConcurrentHashMap.newKeySet();
        final Set<String> jobThreads = ConcurrentHashMap.newKeySet();
        final int batches = 60;
        try (AsyncDataLoader<List<Object>> loader = new AsyncDataLoader<>(size -> {
            final long batch = calls.getAndIncrement();
            sourceThreads.add(Thread.currentThread().getName());
            final List<Object> jobs = new ArrayList<>();
            for (int i = 0; i < size; i++)
            {
                final long item = 100 * batch + i;
                jobs.add((Callable<Long>)() -> {
                    jobThreads.add(Thread.currentThread().getName());
                    return item;
                });
            }
            return jobs;
        }, 8, null, 2, 3))
        {
            assertEquals(6, loader.capacity());
            for (long b = 0; b < batches; b++)
            {
                final List<Object> batch = loader.next();
                final List<Object> expected = new ArrayList<>();
                for (int i = 0; i < 8; i++)
                {
                    expected.add(100 * b + i);
                }
                assertEquals(expected, batch, "jobs replaced by their results, in order, batches in fetch order");
            }
        }
        assertTrue(calls.get() >= batches, "one source call per batch: " + calls.get());
        assertEquals(1, sourceThreads.size(), "the source is called on the producer thread only: " + sourceThreads);
        assertTrue(jobThreads.stream().allMatch(t -> t.contains("-worker")), "jobs run on the workers: " + jobThreads);
    }

    @Test
    void shouldPassABatchWithoutJobsThroughWithWorkers()
    {
        final AtomicLong counter = new AtomicLong();
        try (AsyncDataLoader<List<Long>> loader = new AsyncDataLoader<>(size -> {
            final List<Long> batch = new ArrayList<>();
            for (int i = 0; i < size; i++)
            {
                batch.add(counter.getAndIncrement());
            }
            return batch;
        }, 4, null, 2, 2))
        {
            for (long b = 0; b < 20; b++)
            {
                assertEquals(List.of(4 * b, 4 * b + 1, 4 * b + 2, 4 * b + 3), loader.next());
            }
        }
    }

    @Test
    void shouldReturnPromptlyFromNextAndStopItsThreadsWhenClosedWhileTheSourceBlocks() throws Exception
    {
        final CountDownLatch sourceEntered = new CountDownLatch(1);
        final CountDownLatch never = new CountDownLatch(1);
        final AsyncDataLoader<List<Long>> loader = new AsyncDataLoader<>(size -> {
            sourceEntered.countDown();
            never.await();
            return List.of();
        }, 4, null, 2, 2);
        final CompletableFuture<List<Long>> waiting = CompletableFuture.supplyAsync(loader::next);
        assertTrue(sourceEntered.await(10, TimeUnit.SECONDS));
        loader.close();
        assertNull(waiting.get(10, TimeUnit.SECONDS), "next() returns null once closed");
        assertTrue(loader.isStopped(), "close() stops the producer");
        loader.close();
    }

    @Test
    void shouldSurfaceAWorkerFailureAtTheNextCall()
    {
        final IllegalStateException boom = new IllegalStateException("disk gone");
        try (AsyncDataLoader<List<Long>> loader = new AsyncDataLoader<>(size -> {
            throw boom;
        }, 4, null, 2, 2))
        {
            final DataLoaderException ex = assertThrows(DataLoaderException.class, loader::next);
            assertSame(boom, ex.getCause());
        }
    }

    @Test
    void shouldRejectBadSettings()
    {
        assertMessage("dataloader.num_workers: expected a non-negative integer, got -1", 4, 4, -1);
        assertMessage("dataloader.chunk_size: 3 must divide batch_size=8", 8, 3, 2);
        assertMessage("dataloader.chunk_size: 3 must divide batch_size=8", 8, 3, 0);
        assertMessage("batch_size: expected a positive integer, got 0", 0, 1, 0);
    }

    private static void assertMessage(final String expected, final int batch, final int chunk, final int workers)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> new AsyncDataLoader<List<Long>>(size -> List.of(), batch, null, chunk, workers).close());
        assertTrue(ex.getMessage().startsWith(expected), ex.getMessage());
    }

    @Test
    void shouldMoveEveryTensorOfABatchToTheDeviceOnTheLoaderThreadInOrder() throws Exception
    {
        // libtorch's meta device exists in every build, so the real copy path runs here without a GPU.
        Threads.configure();
        final DeviceTransfer<Map<String, Object>> meta = DeviceTransfer.forDevice("meta");
        final List<Tensor> fetched = new CopyOnWriteArrayList<>();
        final Set<String> transferThreads = ConcurrentHashMap.newKeySet();
        final AtomicLong counter = new AtomicLong();
        try (AsyncDataLoader<Map<String, Object>> loader = new AsyncDataLoader<>(size -> {
            final Tensor obs = torch.ones(size, 3);
            final Tensor reward = torch.zeros(size);
            fetched.add(obs);
            fetched.add(reward);
            return Map.of("obs", obs, "rest", List.of(reward, "tag"), "id", counter.getAndIncrement());
        }, 4, batch -> {
            transferThreads.add(Thread.currentThread().getName());
            return meta.apply(batch);
        }, 4, 0))
        {
            for (long i = 0; i < 5; i++)
            {
                final Map<String, Object> batch = loader.next();
                assertEquals(i, batch.get("id"));
                final Tensor obs = (Tensor)batch.get("obs");
                assertTrue(obs.device().is_meta(), obs.device().str().getString());
                assertEquals(List.of(4L, 3L), List.of(obs.size(0), obs.size(1)));
                final List<?> rest = (List<?>)batch.get("rest");
                assertTrue(((Tensor)rest.get(0)).device().is_meta());
                assertEquals("tag", rest.get(1));
            }
        }
        assertEquals(Set.of(), transferThreads.stream().filter(name -> !name.startsWith("ding4j-loader-"))
            .collect(Collectors.toSet()), "transfers ran off the loader thread");
        for (int i = 0; i < 10; i++)
        {
            // The five batches taken were copied, and their host tensors released at once.
            assertTrue(fetched.get(i).isNull(), "host tensor " + i + " kept after its copy");
        }
    }

    @Test
    void shouldRejectDevicesLibtorchCannotUseHere()
    {
        Threads.configure();
        final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
            () -> DeviceTransfer.forDevice("gpu0"));
        assertTrue(unknown.getMessage().startsWith("device: gpu0 is not a libtorch device"), unknown.getMessage());
        final IllegalArgumentException cuda = assertThrows(IllegalArgumentException.class,
            () -> DeviceTransfer.forDevice("cuda:0"));
        assertEquals("device: cuda:0 needs CUDA, and libtorch sees none here (build with -Pgpu on a machine with a "
            + "GPU, or use cpu)", cuda.getMessage());
    }
}
