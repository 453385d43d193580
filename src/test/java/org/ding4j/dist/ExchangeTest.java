package org.ding4j.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.testing.ChildJvm;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Exchange} on a real two-rank Gloo group in this JVM (one thread per rank, over loopback): the
 * receives of the next sum are posted ahead into two buffers used in turn, so every sum must still pair the peers'
 * values of the same round; a start or finish out of turn is refused before it touches the wire; closing the
 * exchanges with receives posted and then the groups ends cleanly.
 */
class ExchangeTest
{
    private static final int ROUNDS = 7;

    @BeforeAll
    static void natives()
    {
        Threads.configure();
    }

    @Test
    void everySumShouldPairTheSameRoundAndOutOfTurnCallsShouldBeRefused() throws Exception
    {
        final int port = ChildJvm.freePort();
        final ExecutorService ranks = Executors.newFixedThreadPool(2);
        try
        {
            final List<Future<List<Float>>> sums = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++)
            {
                final int r = rank;
                sums.add(ranks.submit(() -> rank(r, port)));
            }
            for (int rank = 0; rank < 2; rank++)
            {
                final List<Float> seen = sums.get(rank).get(120, TimeUnit.SECONDS);
                for (int round = 0; round < ROUNDS; round++)
                {
                    // Rank 0 contributes 10 * round, rank 1 10 * round + 1: a sum one round apart would be off by 10.
                    assertEquals(20f * round + 1f, seen.get(round), "rank " + rank + ", round " + round);
                }
            }
        }
        finally
        {
            ranks.shutdownNow();
        }
    }

    /** One rank: ROUNDS sums of 10 * round + rank, with out-of-turn calls tried on the way. */
    private static List<Float> rank(final int rank, final int port)
    {
        final List<Float> seen = new ArrayList<>();
        try (DistGroup group = DistGroup.join(new DistInfo(rank, 2, rank, "127.0.0.1", port, "exchange-test"),
            Duration.ofSeconds(60));
            Tensor values = torch.zeros(64))
        {
            final Exchange exchange = group.exchange(values);
            assertThrows(IllegalStateException.class, () -> exchange.finish("test"), "finish before any start");
            for (int round = 0; round < ROUNDS; round++)
            {
                values.fill_(new org.bytedeco.pytorch.Scalar(10f * round + rank));
                exchange.start("test");
                final IllegalStateException twice = assertThrows(IllegalStateException.class,
                    () -> exchange.start("test"));
                assertTrue(twice.getMessage().contains("start called twice without finish"), twice.getMessage());
                exchange.finish("test");
                final float first = values.get(0).item_float();
                assertEquals(first * 64, values.sum().item_float(), "every element summed alike");
                seen.add(first);
            }
            // Receives of the next two rounds are posted: the exchange goes with the group, which lets go of them.
            exchange.close();
        }
        return seen;
    }
}
