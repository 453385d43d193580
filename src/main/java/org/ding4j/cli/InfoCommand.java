package org.ding4j.cli;

import java.io.IOException;
import java.io.PrintWriter;

import org.bytedeco.javacpp.Loader;
import org.ding4j.torch.Natives;
import org.ding4j.torch.PackedMlp;

/**
 * {@code ding4j info}: what this machine gives ding4j (Java, the native libraries and how long they took to load,
 * cores, the acting kernel's SIMD variant). It does what every training run does before its first line of work and
 * nothing else, so its process wall is the start-up floor that benchmarks/startup.sh compares a run's with.
 */
final class InfoCommand
{
    private static final String[] VARIANTS = {"plain C++", "AVX2+FMA", "AVX-512"};

    private InfoCommand()
    {
    }

    /** @return the {@code info} command's declaration */
    static Cli.Command command()
    {
        return new Cli.Command("info", "Print Java, native library, CPU and SIMD facts of this machine (loads the "
            + "native libraries).")
            .action(args -> print(args.out()));
    }

    private static int print(final PrintWriter out) throws IOException
    {
        Natives.load();
        out.printf("%s on Java %s (%s), %s %s, %d cores%n", Cli.VERSION, Runtime.version(),
            System.getProperty("java.vm.name"), System.getProperty("os.name"), System.getProperty("os.arch"),
            Runtime.getRuntime().availableProcessors());
        out.printf("libtorch presets %s (%s build), OpenBLAS presets %s: loaded in %.2f s%n",
            Loader.getVersion("org.bytedeco", "pytorch"), Natives.cpuPresets() ? "CPU" : "CUDA",
            Loader.getVersion("org.bytedeco", "openblas"), Natives.loadSeconds());
        out.printf("acting kernel (PackedMlp): %s%n", VARIANTS[PackedMlp.widestVariant()]);
        out.flush();
        return 0;
    }
}
