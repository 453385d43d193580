package org.ding4j.torch;

import org.bytedeco.javacpp.annotation.Namespace;
import org.bytedeco.javacpp.annotation.Properties;
import org.ding4j.torch.presets.Ding4jKernelsPresets;

/**
 * JNI peer of {@code native/ding4j_kernels.h}. Addresses are raw {@code data_ptr()} values of contiguous
 * CPU float32 tensors; nothing here checks them, so only the validated wrappers in this package
 * ({@link FusedAdam}, {@link FusedSgd}, {@link FlatParameters}) call in.
 */
@Properties(inherit = Ding4jKernelsPresets.class)
@Namespace("ding4j")
final class NativeKernels
{
    static
    {
        // Under ding4j's process-wide load lock: the kernels link against libtorch's and OpenBLAS's libraries.
        Natives.load();
    }

    private NativeKernels()
    {
    }

    /** Loads the library now rather than at the first kernel call. */
    static void load()
    {
        // The static initialiser does the work.
    }

    static native void fill_zero(long address, long bytes);

    static native long dqn_create(long sgemmAddress, long dimsAddress, long offsetsAddress);

    static native void dqn_free(long handle);

    /** backward 0: only forward and loss; the caller runs {@link #backward_stage} for each stage. */
    static native int dqn_update(long handle, long params, long grads, long target, long obs, long nextObs,
        long action, long ret, long bootstrap, long weight, int huber, long stats, long td, long error, int backward);

    static native long backward_stage(long handle, int stage);

    static native int backward_stages(long handle);

    static native int dqn_q_values(long handle, long params, long obs, long rows, long q);

    static native long mlp_create(long sgemmAddress, long dimsAddress, long offsetsAddress);

    /** backward 0: only forward and loss; the caller runs {@link #backward_stage} for each stage. */
    static native void mlp_step(long handle, long params, long grads, long x, long y, long weight, long stats,
        int backward);

    static native long ac_create(long sgemmAddress, long dimsAddress, long offsetsAddress);

    static native void ac_free(long handle);

    /** stage 0: the whole update; 1, 2, 3: its stages, gradients averaged across ranks between them. */
    static native void ac_update(long handle, long addresses, long scalars, long stats, int stage);

    static native long ppo_create(long sgemmAddress, long dimsAddress, long offsetsAddress);

    static native void ppo_free(long handle);

    /** Minibatches first..last-1; stage 0: each whole; 1, 2: one minibatch's gradients, then its step. */
    static native void ppo_update(long handle, long addresses, long scalars, long stats, long first, long last,
        int stage);

    static native void ppo_gae(int steps, int envs, float[] rewards, float[] values, byte[] flags,
        float[] truncValues, float[] lastValues, double gamma, double lambda, float[] advantages, float[] returns);

    /** variant -1: the variant dense_forward picks; 0 to 2: 1 if this CPU runs it, else 0. */
    static native int dense_variant(int variant);

    static native void dense_pack(long plan, int layers, long params, long packed);

    /** variant -1: the widest this CPU runs; else one dense_variant said it runs. */
    static native void dense_forward(long plan, int layers, int dueling, long packed, long obs, int rows,
        long scratch, long out, int variant);

    static native long malloc_in_use_bytes();

    static native int exit_without_later_destructors();

    static native double sum_squares(long gradAddress, long n);

    static native void adam_step(
        long paramAddress, long gradAddress, long expAvgAddress, long expAvgSqAddress, long maxExpAvgSqAddress,
        long n, double lr, double beta1, double beta2, double eps, double weightDecay, long step,
        int amsgrad, int decoupled, float gradScale);

    static native void sgd_step(
        long paramAddress, long gradAddress, long momentumAddress, long n, double lr, double momentum,
        double dampening, double weightDecay, int nesterov, int first, float gradScale);
}
