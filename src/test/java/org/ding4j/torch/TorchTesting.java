package org.ding4j.torch;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/** Shared helpers for tests on real libtorch: one thread setting for the JVM, data, comparisons. */
public final class TorchTesting
{
    static
    {
        Threads.configure();
    }

    private TorchTesting()
    {
    }

    /** Makes sure the thread settings are applied before a test touches libtorch. */
    static void init()
    {
        // The static initialiser does the work.
    }

    /** A deterministic regression batch: inputs [batch, in], targets [batch, out]; both retained for the caller. */
    static Tensor[] batch(final long seed, final long batch, final long in, final long out)
    {
        try (PointerScope scope = new PointerScope())
        {
            torch.manual_seed(seed);
            final Tensor x = torch.randn(batch, in);
            final Tensor y = torch.randn(batch, out);
            x.retainReference();
            y.retainReference();
            return new Tensor[] {x, y};
        }
    }

    /** One forward, MSE loss and backward of an MLP on a batch. */
    static double lossAndBackward(final Mlp mlp, final Tensor[] batch)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor loss = torch.mse_loss(mlp.forward(batch[0]), batch[1]);
            loss.backward();
            return loss.item_double();
        }
    }

    /** max |a - b| / max |b|: the difference relative to the reference tensor's scale. */
    public static double relativeDifference(final Tensor a, final Tensor b)
    {
        try (PointerScope scope = new PointerScope())
        {
            final double diff = a.sub(b).abs().max().item_double();
            final double scale = b.abs().max().item_double();
            return diff / Math.max(scale, Double.MIN_NORMAL);
        }
    }

    /** The largest {@link #relativeDifference} over the parameters of two MLPs of one shape. */
    static double maxParameterDifference(final Mlp a, final Mlp b)
    {
        try (PointerScope scope = new PointerScope())
        {
            double worst = 0.0;
            final var pa = a.module().parameters();
            final var pb = b.module().parameters();
            for (long i = 0; i < pa.size(); i++)
            {
                worst = Math.max(worst, relativeDifference(pa.get(i), pb.get(i)));
            }
            return worst;
        }
    }

    /** Closes tensors that a helper retained. */
    static void release(final Tensor... tensors)
    {
        for (final Tensor t : tensors)
        {
            t.releaseReference();
        }
    }
}
