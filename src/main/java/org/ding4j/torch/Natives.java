package org.ding4j.torch;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.openblas.global.openblas_nolapack;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.jfr.Jfr;
import org.ding4j.jfr.NativeLoadEvent;

/**
 * The one process-safe entry point that loads ding4j's native libraries (OpenBLAS, libtorch, {@code jniding4j}).
 * JavaCPP extracts a library into its cache folder under its own lock, one file at a time, but a second process
 * that finds an already extracted library loads it without that lock, and the dynamic loader then maps a dependency
 * the first process is still writing (two JVMs on a fresh cache died with SIGBUS in 6 of 10 pairs). So the first load
 * in each process holds an exclusive lock on a file of ding4j's own in JavaCPP's cache folder ({@value #LOCK_FILE},
 * apart from JavaCPP's lock): a second process waits until the first has extracted and loaded everything, and says so
 * (naming the first) should that take seconds. A process whose starter loaded the same libraries into the same cache
 * ({@link #cacheLoadedBy}: the ranks of {@code ding4j launch}) takes no lock.
 * <p>
 * {@link Threads#configure()}, the kernels and the command line call this before anything else; an application that
 * builds libtorch objects itself should call {@code Threads.configure()} (or this) first. Thread-safe; later calls
 * return at once. Each library's load is one JFR {@link NativeLoadEvent} when recorded.
 * <p>
 * OpenBLAS: JavaCPP maps two byte-identical files, {@code libopenblas_nolapack.so.0} and (for libtorch's
 * {@code openblas} class) {@code libopenblas.so.0}, but both carry the soname {@code libopenblas.so.0}, so the
 * first one loaded serves libtorch, the fused kernels' {@code cblas_sgemm} and {@link Threads}' thread count alike;
 * the second is mapped and never called (about 5 ms of loading).
 * <p>
 * CUDA: with the CPU presets on the class path (no {@code -gpu} libtorch, {@link #cpuPresets()}), JavaCPP tries the
 * presets' CUDA libraries one by one (about 25, and loads a system CUDA runtime it finds) that a CPU libtorch never
 * uses, 0.1-0.15 s of every start here, unless the JavaCPP platform extension ({@value #EXTENSION_PROPERTY}) is empty.
 * That property is the JVM's, so the library does not set it: an application on a CPU build sets it empty before the
 * first load ({@code -Dorg.bytedeco.javacpp.platform.extension=}; the command line does), one that uses other
 * JavaCPP presets in their {@code -gpu} build leaves it. {@link #loadInBackground()} starts the
 * load on a thread of its own, so that a program can do its own start-up meanwhile.
 */
public final class Natives
{
    /** The lock file's name in JavaCPP's cache folder. */
    public static final String LOCK_FILE = ".ding4j-load.lock";
    /** JavaCPP's system property for the platform extension ({@code -gpu} selects the CUDA builds). */
    public static final String EXTENSION_PROPERTY = "org.bytedeco.javacpp.platform.extension";
    /**
     * JavaCPP's system property that, false, makes its per-class library check return at once. Every class of the
     * presets runs that check in its static initialiser (a dozen jar and file lookups each); once every library a
     * process will use is loaded it finds nothing to do. A JVM-wide setting, so the application's to make: it stops
     * any later JavaCPP library (another preset, Gloo's) from loading.
     */
    public static final String LOAD_LIBRARIES_PROPERTY = "org.bytedeco.javacpp.loadLibraries";

    /** How long a process waits for another's load before it says so: loads take well under a second. */
    private static final Duration LOCK_NOTICE = Duration.ofSeconds(3);
    /** How often a waiting process tries the lock until then. */
    private static final Duration LOCK_POLL = Duration.ofMillis(10);

    private static volatile double loadSeconds = Double.NaN;
    private static final Object BACKGROUND_LOCK = new Object();
    private static Thread background;
    /** What the background load threw: a retry would only meet the half-initialised binding classes. */
    private static volatile Throwable backgroundFailure;

    /** Set by {@link #cacheLoadedBy}: this process's load takes no lock (its libraries are extracted already). */
    private static volatile boolean cacheReady;
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
        final Thread started;
        synchronized (BACKGROUND_LOCK)
        {
            started = background;
        }
        if (null != started && Thread.currentThread() != started)
        {
            // Its caller's preparation (loadInBackground(first)) runs before it takes this class's monitor, and must
            // come before any load: wait for the whole background load, then rethrow what it threw, if anything.
            awaitBackgroundLoad();
        }
        synchronized (Natives.class)
        {
            if (loaded || loading)
            {
                return;
            }
            rethrowBackgroundFailure();
            loading = true;
            final long start = System.nanoTime();
            final Path lockFile = cacheFolder().resolve(LOCK_FILE);
            try
            {
                if (cacheReady)
                {
                    loadLibraries();
                }
                else
                {
                    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
                        FileLock lock = lockSaying(channel, lockFile))
                    {
                        extractLibtorch();
                        loadLibraries();
                    }
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot lock " + lockFile + " to load the native libraries", ex);
            }
            finally
            {
                loading = false;
            }
            loadSeconds = (System.nanoTime() - start) / 1e9;
            loaded = true;
        }
    }

    /**
     * Extracts libtorch's whole folder into the cache before its first load, when {@code libtorch_cpu.so} is not there
     * yet. JavaCPP extracts each library only as it loads it, and it loads {@code libtorch.so} before its neighbour
     * {@code libtorch_cpu.so}: on an empty cache the dynamic loader, finding no {@code libtorch_cpu.so} beside it
     * ({@code $ORIGIN}), took the system's, and where Debian's {@code libtorch-dev} is installed that is PyTorch
     * 1.13's: the first run on such a machine died in its constructors (SIGSEGV). Under the load lock.
     *
     * @throws UncheckedIOException if the folder cannot be extracted
     */
    private static void extractLibtorch()
    {
        final String folder = "/org/bytedeco/pytorch/" + Loader.getPlatform()
            + System.getProperty(EXTENSION_PROPERTY, "") + "/";
        final java.net.URL cpu = torch.class.getResource(folder + "libtorch_cpu.so");
        if (null == cpu || !"jar".equals(cpu.getProtocol()))
        {
            return;  // not in a jar (a build of the presets of one's own): nothing to extract
        }
        if (!extracted(cpu))
        {
            try
            {
                Loader.cacheResources(torch.class, folder);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot extract libtorch's libraries (" + folder + ") into JavaCPP's "
                    + "cache folder " + cacheFolder(), ex);
            }
        }
    }

    /**
     * @param entry a library in a jar
     * @return whether it is in JavaCPP's cache already: false also where its path there cannot be told (a URL of
     *     another form, a nested jar's), so that the folder is extracted then (JavaCPP skips files it has)
     */
    private static boolean extracted(final java.net.URL entry)
    {
        // JavaCPP's cache path for a jar entry: the cache folder, the jar's file name, the entry's path.
        try
        {
            final String path = entry.getPath();
            final int bang = path.indexOf("!/");
            final Path jar = Path.of(java.net.URI.create(path.substring(0, bang)));
            return Files.exists(cacheFolder().resolve(jar.getFileName().toString()).resolve(path.substring(bang + 2)));
        }
        catch (final RuntimeException unknownForm)
        {
            return false;
        }
    }

    private static void loadLibraries()
    {
        recorded("openblas", () -> Loader.load(openblas_nolapack.class));
        recorded("libtorch", () -> Loader.load(torch.class));
        recorded("ding4j", Natives::loadKernels);
    }

    /**
     * For a process started by one that loaded the same libraries (the same class path) into the same JavaCPP cache
     * and still runs, as {@code ding4j launch} does before it starts its ranks: there is nothing left to extract, so
     * this process's {@link #load()} takes no lock. Its ranks then load at the same time instead of one after the
     * other, and a rank stopped while it loads (SIGSTOP) cannot hold up the others' start (and every other ding4j
     * process on the machine) until it goes on. Call it before the load starts; a cache folder other than
     * {@code cacheDir} (this process was given another) changes nothing.
     *
     * @param cacheDir the cache folder the starting process loaded into ({@link #cacheFolder()} there)
     */
    public static void cacheLoadedBy(final String cacheDir)
    {
        try
        {
            cacheReady = cacheFolder().toRealPath().equals(Path.of(cacheDir).toRealPath());
        }
        catch (final IOException | java.nio.file.InvalidPathException ex)
        {
            cacheReady = false;
        }
    }

    /**
     * Takes the lock; if another process holds it for longer than a load takes ({@link #LOCK_NOTICE}), says once,
     * naming that process, what this one waits for: a process stopped while it loads (Ctrl-Z, SIGSTOP) holds the lock
     * until it goes on or ends, and every ding4j process that starts meanwhile would otherwise wait without a word.
     */
    private static FileLock lockSaying(final FileChannel channel, final Path lockFile) throws IOException
    {
        final long notice = System.nanoTime() + LOCK_NOTICE.toNanos();
        FileLock lock = channel.tryLock();
        while (null == lock && System.nanoTime() - notice < 0)
        {
            LockSupport.parkNanos(LOCK_POLL.toNanos());
            lock = channel.tryLock();
        }
        if (null == lock)
        {
            org.slf4j.LoggerFactory.getLogger(Natives.class).warn("still waiting after {} s for {} to finish loading "
                + "ding4j's native libraries (the lock {}): a busy machine slows a load; a process stopped while it "
                + "loads (Ctrl-Z, SIGSTOP) holds the lock until it goes on or ends", LOCK_NOTICE.toSeconds(),
                holderOf(lockFile), lockFile);
            lock = channel.lock();
        }
        return lock;
    }

    /**
     * @return "process PID" for the process that holds a lock on the file, from the kernel's table of locks
     *     ({@code /proc/locks}, by the file's inode: the holder need not say who it is, so an uncontended load does
     *     nothing more), or "another process" where that table or the inode cannot be read
     */
    private static String holderOf(final Path lockFile)
    {
        try
        {
            final String inode = ":" + Files.getAttribute(lockFile, "unix:ino");
            for (final String line : Files.readAllLines(Path.of("/proc/locks"), StandardCharsets.US_ASCII))
            {
                // "1: POSIX  ADVISORY  WRITE 4242 00:2a:1234567 0 EOF": the pid, then major:minor:inode.
                final String[] fields = line.trim().split("\\s+");
                if (fields.length > 5 && fields[5].endsWith(inode) && !"->".equals(fields[1]))
                {
                    // An open-file-description lock has no owning process (pid -1).
                    return fields[4].startsWith("-") ? "another process" : "process " + fields[4];
                }
            }
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException ex)
        {
            // Not Linux, or no such table here: said without a pid.
        }
        return "another process";
    }

    /**
     * Starts {@link #load()} on a daemon thread ({@code ding4j-native-load}), once; a later {@link #load()} on any
     * thread waits for it and, should it have failed, throws that thread's error. The command line calls this before
     * it parses its arguments: libtorch's loading then overlaps the rest of the start-up. A program that may end
     * before it needs the libraries calls {@link #awaitBackgroundLoad()} first: a process must not exit while
     * libtorch's static constructors run.
     */
    public static void loadInBackground()
    {
        loadInBackground(() -> { });
    }

    /**
     * {@link #loadInBackground()}, with the caller's own preparation run first on the load thread: what must precede
     * the load but need not hold up the caller (the command line's check of which presets are on the class path,
     * 20-30 ms of opening libtorch's jar, before it sets JavaCPP's platform extension).
     *
     * @param first runs on the load thread before the libraries load, not at all if a background load was started
     *              already or the libraries are loaded; a {@link #load()} on another thread waits for both
     */
    public static void loadInBackground(final Runnable first)
    {
        // Its own lock: the class monitor is held for the whole load, and a second caller must not wait for it here.
        synchronized (BACKGROUND_LOCK)
        {
            if (loaded || null != background)
            {
                return;
            }
            background = Threads.newThread(() -> {
                first.run();
                load();
            }, "native-load");
            // Not printed here: the next load() throws it on the thread that needs the libraries.
            background.setUncaughtExceptionHandler((thread, ex) -> backgroundFailure = ex);
            background.start();
        }
    }

    /** Waits for a load started by {@link #loadInBackground()} to end, whatever its outcome; at once if none runs. */
    public static void awaitBackgroundLoad()
    {
        final Thread thread;
        synchronized (BACKGROUND_LOCK)
        {
            thread = background;
        }
        if (null != thread)
        {
            Threads.joinUninterruptibly(thread);
        }
    }

    /** Throws what the background load threw, the same object (its message names the library at fault). */
    private static void rethrowBackgroundFailure()
    {
        final Throwable failure = backgroundFailure;
        if (failure instanceof Error error)
        {
            throw error;
        }
        if (failure instanceof RuntimeException runtime)
        {
            throw runtime;
        }
    }

    /**
     * For a process about to end: its exit then skips the exit handlers and C++ static destructors of the native
     * libraries loaded so far (libtorch deregisters each of its operators there, about 75 ms of every exit here).
     * The JVM still runs Java's shutdown hooks, writes a JFR recording and a class-data archive first, as it does
     * all that before the C library's exit; C stdio buffers are flushed. Call it last, once what the program opened
     * is closed: the command line does, just before {@code System.exit}. An embedding service has no reason to.
     *
     * @return true if in force; false if the native libraries are not loaded (nothing to skip) or ding4j's own
     *         library or the C library cannot do it
     */
    public static boolean skipNativeDestructorsAtExit()
    {
        if (!loaded)
        {
            return false;
        }
        try
        {
            return 0 == NativeKernels.exit_without_later_destructors();
        }
        catch (final UnsatisfiedLinkError ex)
        {
            return false;
        }
    }

    /** @return seconds the one load took (on whichever thread ran it), NaN before it finished */
    public static double loadSeconds()
    {
        return loadSeconds;
    }

    /**
     * @return whether the libtorch presets on the class path are the CPU build (no {@code -gpu} libtorch): then an
     *     empty {@value #EXTENSION_PROPERTY} skips JavaCPP's CUDA probes
     */
    public static boolean cpuPresets()
    {
        return null == Natives.class.getResource("/org/bytedeco/pytorch/" + Loader.getPlatform() + "-gpu/"
            + System.mapLibraryName("jnitorch"));
    }

    /** Loads one library; a JFR {@link NativeLoadEvent} (library, JavaCPP's path for it, duration) when recorded. */
    private static void recorded(final String library, final java.util.function.Supplier<String> load)
    {
        if (!Jfr.nativeLoads())
        {
            load.get();
            return;
        }
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

    /**
     * @return JavaCPP's cache folder, where it extracts the libraries and {@link #load()} keeps its lock
     * @throws UncheckedIOException if it cannot be created
     */
    public static Path cacheFolder()
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
