package org.ding4j.torch;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.global.torch;

/**
 * A child JVM of {@link NativeLoadingTest}: loads the natives the library's way, runs a kernel and a libtorch op.
 * With the argument {@code unguarded} it lets the first libtorch op load libtorch without {@link Natives} (how the
 * crash was reproduced by hand; see the README's reliability table).
 */
public final class NativeLoadProbe
{
    private NativeLoadProbe()
    {
    }

    public static void main(final String[] args)
    {
        if (0 == args.length || !"unguarded".equals(args[0]))
        {
            Threads.configure();
        }
        try (PointerScope scope = new PointerScope())
        {
            System.out.println("sum " + torch.ones(3, 4).sum().item_double() + " in-use " + (NativeMemory.mallocInUseBytes() > 0));
        }
    }
}
