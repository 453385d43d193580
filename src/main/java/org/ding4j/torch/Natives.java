package org.ding4j.torch;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.jfr.NativeLoadEvent;

/**
 * The one process-safe entry point that loads ding4j's native libraries (OpenBLAS, libtorch, {@code jniding4j}).
 * JavaCPP extracts a library into its cache folder under its own lock, one file at a time, but a second process
 * that finds an already extracted library loads it without that lock, and the dynamic loader then maps a dependency
 * the first process is still writing (two JVMs on a fresh cache died with SIGBUS in 6 of 10 pairs). So the first load
 * in each process holds an exclusive lock on a file of ding4j's own in JavaCPP's cache folder ({@value #LOCK_FILE},
 * apart from JavaCPP's lock): a second process waits until the first has extracted and loaded everything.
 * <p>
 * {@link Threads#configure()}, the kernels and the command line call this before anything else; an application that
 * builds libtorch objects itself should call {@code Threads.configure()} (or this) first. Thread-safe; later calls
 * return at once. Each library's load is one JFR {@link NativeLoadEvent} when recorded.
 */
public final class Natives
{
    /** The lock file's name in JavaCPP's cache folder. */
    public static final String LOCK_FILE = ".ding4j-load.lock";

    private static volatile boolean loaded;
    /** True while this class's monitor holder loads: a re-entry (a class initialiser loading on) returns at once. */
    private static boolean loading;

    private Natives()
    {
    }

    /**
     * Loads the native libraries once per process, under the cache folder's lock.
     *
     * @throws UncheckedIOException naming the folder if the cache folder or its lock file cannot be used
     */
    public static void load()
    {
        if (loaded)
        {
            return;
        }
        synchronized (Natives.class)
        {
            if (loaded || loading)
            {
                return;
            }
            loading = true;
            final Path lockFile = cacheDir().resolve(LOCK_FILE);
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock lock = channel.lock())
            {
                recorded("openblas", () -> Loader.load(openblas_nolapack.class));
                recorded("libtorch", () -> Loader.load(torch.class));
                recorded("ding4j", Natives::loadKernels);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot lock " + lockFile + " to load the native libraries", ex);
            }
            finally
            {
                loading = false;
            }
            loaded = true;
        }
    }

    /** Loads one library; a JFR {@link NativeLoadEvent} (library, JavaCPP's path for it, duration) when recorded. */
    private static void recorded(final String library, final java.util.function.Supplier<String> load)
    {
        final NativeLoadEvent event = new NativeLoadEvent();
        event.begin();
        final String path = load.get();
        event.end();
        if (event.shouldCommit())
        {
            event.library = library;
            event.path = path;
            event.commit();
        }
    }

    /**
     * ding4j's own kernels; a pure-Java build ({@code -Djavacpp.compiler.skip=true}) has none, and then only the
     * fused optimizers, which need them, fail (when they are used) instead of everything that loads libtorch.
     */
    private static String loadKernels()
    {
        try
        {
            return Loader.load(NativeKernels.class);
        }
        catch (final UnsatisfiedLinkError ex)
        {
            org.slf4j.LoggerFactory.getLogger(Natives.class).warn("ding4j's native kernels (jniding4j) are not "
                + "built: the fused optimizers cannot run ({})", ex.getMessage());
            return null;
        }
    }

    /**
     * @return the address of the loaded OpenBLAS's {@code cblas_sgemm}, for the fused kernels to call
     * @throws IllegalStateException if OpenBLAS is not loaded
     */
    static long sgemmAddress()
    {
        load();
        final org.bytedeco.javacpp.Pointer sgemm = Loader.addressof("cblas_sgemm");
        if (null == sgemm || sgemm.isNull())
        {
            throw new IllegalStateException("cblas_sgemm is not loaded (OpenBLAS)");
        }
        return sgemm.address();
    }

    private static Path cacheDir()
    {
        try
        {
            final File dir = Loader.getCacheDir();
            Files.createDirectories(dir.toPath());
            return dir.toPath();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create JavaCPP's cache folder (org.bytedeco.javacpp.cachedir)", ex);
        }
    }
}
