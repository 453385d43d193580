package org.ding4j.torch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.global.torch;

/**
 * A child JVM of {@link NativeLoadingTest}: loads the natives the library's way, runs a kernel and a libtorch op.
 * With the argument {@code unguarded} it lets the first libtorch op load libtorch without {@link Natives} (how the
 * crash was reproduced by hand; see docs/reliability.md). With {@code exit} it loads in the background,
 * reports whether a CUDA runtime is mapped, skips the native destructors and exits with code 3 through a shutdown hook.
 * With {@code trusted} it loads as a rank of {@code ding4j launch} does, from a cache its launcher filled (no lock).
 */
public final class NativeLoadProbe
{
    private NativeLoadProbe()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final String mode = 0 == args.length ? "" : args[0];
        if ("exit".equals(mode))
        {
            // The command line's start-up: the application, not the library, empties JavaCPP's platform extension.
            if (Natives.cpuPresets())
            {
                System.setProperty(Natives.EXTENSION_PROPERTY, "");
            }
            Natives.loadInBackground();
            Natives.load();
            final List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
            final boolean cuda = maps.stream().anyMatch(line -> line.contains("libcudart"));
            System.out.println("cuda mapped in a CPU build " + (cuda && Natives.cpuPresets()));
            System.out.println("load seconds " + (Natives.loadSeconds() > 0));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
        }
        if ("trusted".equals(mode))
        {
            Natives.cacheLoadedBy(Natives.cacheFolder().toString());
        }
        if (!"unguarded".equals(mode))
        {
            Threads.configure();
        }
        try (PointerScope scope = new PointerScope())
        {
            System.out.println("sum " + torch.ones(3, 4).sum().item_double() + " in-use " + (NativeMemory.mallocInUseBytes() > 0));
        }
        if ("exit".equals(mode))
        {
            System.out.println("skipping destructors " + Natives.skipNativeDestructorsAtExit());
            System.exit(3);
        }
    }
}
