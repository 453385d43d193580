package org.ding4j.torch.presets;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.annotation.Platform;
import org.bytedeco.javacpp.annotation.Properties;

/**
 * JavaCPP properties of ding4j's own native library, {@code jniding4j}: the header-only kernels of
 * {@code native/ding4j_kernels.h}, compiled by the javacpp Maven plugin at {@code process-classes}.
 * <p>
 * The library does not link libtorch (the presets jars ship no headers for it); the kernels take
 * {@code data_ptr()} addresses of contiguous float tensors that the Java side has already checked.
 */
@Properties(value = {
    @Platform(include = "ding4j_kernels.h", library = "jniding4j", compiler = "cpp17"),
    @Platform(value = "linux-x86_64", extension = "-gpu", include = "ding4j_kernels.h", library = "jniding4j",
        compiler = "cpp17")
})
public final class Ding4jKernelsPresets
{
    static
    {
        Loader.checkVersion("org.bytedeco", "javacpp");
    }

    private Ding4jKernelsPresets()
    {
    }
}
