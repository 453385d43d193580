package org.ding4j.torch;

import java.util.Objects;
import java.util.function.Supplier;

import org.bytedeco.pytorch.Generator;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * Draws what a run builds (its nets' initial weights) from libtorch's process-wide CPU generator seeded with the run's
 * seed, as {@code torch.manual_seed(seed)} before building would, without taking that generator from the
 * application: its state is saved first and put back after. libtorch's modules draw from that one generator and take
 * no other, so this is how a seed gives the same nets whatever else the process does with it. The builds of all
 * runs in the process take turns (one lock), so two runs started together each draw from their own seed, and
 * {@link #isolated} builds nets whose draws do not matter (they are overwritten by a checkpoint) without moving the
 * application's stream. Not covered: the application's own draws from that generator on another thread while a
 * build runs (libtorch's lock on the generator is not reachable from Java): don't draw there while a run starts.
 * Thread-safe.
 */
public final class Seeding
{
    private static final Object LOCK = new Object();

    private Seeding()
    {
    }

    /**
     * @param seed  the seed the build draws from
     * @param build what to build (it must draw only on the calling thread and within this call)
     * @param <T>   what it builds
     * @return what it built
     */
    public static <T> T drawn(final long seed, final Supplier<T> build)
    {
        return build(true, seed, build);
    }

    /**
     * @param build what to build, its draws unseeded and of no consequence (nets a checkpoint overwrites)
     * @param <T>   what it builds
     * @return what it built; the generator's state as it was before
     */
    public static <T> T isolated(final Supplier<T> build)
    {
        return build(false, 0, build);
    }

    private static <T> T build(final boolean seeded, final long seed, final Supplier<T> build)
    {
        Objects.requireNonNull(build, "build");
        Natives.load();
        synchronized (LOCK)
        {
            // Owned here and closed here (not in a scope): the build's own objects must outlive this call.
            final Generator cpu = torch.getDefaultCPUGenerator();
            final Tensor saved = cpu.get_state();
            try
            {
                if (seeded)
                {
                    // What at::manual_seed does for the CPU generator; a CUDA generator's seed is left alone.
                    cpu.set_current_seed(seed);
                }
                return build.get();
            }
            finally
            {
                cpu.set_state(saved);
                saved.close();
                cpu.close();
            }
        }
    }
}
