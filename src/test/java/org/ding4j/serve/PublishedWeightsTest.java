package org.ding4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * Many readers against one writer that publishes vectors whose every entry is the publish's number: a validated read
 * must see one number throughout (a mix of two publishes would show two), and the numbers a reader sees never go
 * back.
 */
class PublishedWeightsTest
{
    private static final int SIZE = 4096;
    private static final int PUBLISHES = 20_000;
    private static final int READERS = 4;

    @Test
    void readersShouldNeverSeeATornOrMixedVector() throws Exception
    {
        final PublishedWeights weights = new PublishedWeights(SIZE);
        final CountDownLatch start = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(READERS);
        final AtomicReference<String> failure = new AtomicReference<>();
        final AtomicLong validated = new AtomicLong();
        final AtomicLong retried = new AtomicLong();
        final AtomicLong writerDone = new AtomicLong();
        final List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < READERS; t++)
        {
            final Thread reader = new Thread(() ->
            {
                try
                {
                    start.await();
                    float last = 0;
                    while (0 == writerDone.get() || validated.get() < READERS)
                    {
                        final long stamp = weights.tryRead();
                        if (stamp < 0)
                        {
                            retried.incrementAndGet();
                            continue;
                        }
                        final FloatBuffer b = weights.buffer(stamp).view();
                        final float first = b.get(0);
                        float lo = first;
                        float hi = first;
                        for (int i = 1; i < SIZE; i++)
                        {
                            lo = Math.min(lo, b.get(i));
                            hi = Math.max(hi, b.get(i));
                        }
                        if (!weights.validate(stamp))
                        {
                            retried.incrementAndGet();
                            continue;
                        }
                        validated.incrementAndGet();
                        if (lo != hi)
                        {
                            failure.compareAndSet(null, "a validated read mixed publishes " + lo + " and " + hi);
                        }
                        if (first < last)
                        {
                            failure.compareAndSet(null, "publish " + first + " seen after " + last);
                        }
                        last = first;
                    }
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
                finally
                {
                    done.countDown();
                }
            }, "reader-" + t);
            reader.setDaemon(true);
            readers.add(reader);
            reader.start();
        }
        final float[] vector = new float[SIZE];
        start.countDown();
        for (int k = 1; k <= PUBLISHES; k++)
        {
            java.util.Arrays.fill(vector, k);
            weights.publish(vector);
        }
        writerDone.set(1);
        assertTrue(done.await(60, TimeUnit.SECONDS), "readers finished");
        assertEquals(null, failure.get());
        assertTrue(validated.get() >= READERS, "validated reads: " + validated);
        assertEquals(PUBLISHES, weights.version());
        System.out.printf("%d validated reads, %d retried, %d publishes%n", validated.get(), retried.get(), PUBLISHES);
    }

    @Test
    void aStampShouldFailValidationOnceItsBufferIsRewritten()
    {
        final PublishedWeights weights = new PublishedWeights(2);
        weights.publish(new float[] {1, 1});
        final long stamp = weights.tryRead();
        assertEquals(1f, weights.buffer(stamp).view().get(0), 0f);
        weights.publish(new float[] {2, 2});
        assertTrue(weights.validate(stamp), "the other buffer was written: this one is whole");
        weights.publish(new float[] {3, 3});
        assertTrue(!weights.validate(stamp), "this buffer was rewritten");
        assertEquals(3f, weights.buffer(weights.tryRead()).view().get(1), 0f);
    }

    @Test
    void aRefusedPublishShouldLeaveTheWeightsUsable()
    {
        final PublishedWeights weights = new PublishedWeights(2);
        weights.publish(new float[] {1, 1});
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> weights.publish(buffer ->
        {
            buffer.view().put(0, 7f);
            throw new IllegalStateException("the fill failed halfway");
        }));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> weights.publish(new float[3]));
        final long stamp = weights.tryRead();
        assertTrue(stamp >= 0 && weights.validate(stamp));
        assertEquals(1f, weights.buffer(stamp).view().get(0), 0f);
        weights.publish(new float[] {2, 2});
        assertEquals(2, weights.version());
        assertEquals(2f, weights.buffer(weights.tryRead()).view().get(0), 0f);
    }
}
