package org.ding4j.torch;

import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.annotation.ByRef;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.Const;
import org.bytedeco.javacpp.annotation.MemberGetter;
import org.bytedeco.javacpp.annotation.MemberSetter;
import org.bytedeco.javacpp.annotation.Name;
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

    /** threads 2: the twin critics' halves on a helper thread of the update's own; else on the caller's alone. */
    static native void ac_threads(long handle, int threads);

    /** stage 0: the whole update; 1, 2, 3: its stages, gradients averaged across ranks between them. */
    static native void ac_update(long handle, @Const AcArgs args, AcStats stats, int stage);

    static native long ppo_create(long sgemmAddress, long dimsAddress, long offsetsAddress);

    static native void ppo_free(long handle);

    /** threads 2: the critic's forward and backward on a helper thread of the update's own; else the caller's alone. */
    static native void ppo_threads(long handle, int threads);

    /** Minibatches first..last-1; stage 0: each whole; 1, 2: one minibatch's gradients, then its step. */
    static native void ppo_update(long handle, @Const PpoArgs args, PpoStats stats, long first, long last, int stage);

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

    /**
     * {@code ding4j::ppo_detail::Args}: one PPO training call's buffers (data_ptr() addresses) and constants, set by
     * name; each setter returns this for chaining.
     */
    @Name("ppo_detail::Args")
    static final class PpoArgs extends Pointer
    {
        static
        {
            Natives.load();
        }

        PpoArgs()
        {
            allocate();
        }

        private native void allocate();

        @MemberSetter
        native PpoArgs params(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs grads(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs exp_avg(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs exp_avg_sq(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs obs(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs action(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs log_prob(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs value(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs advantage(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs ret(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs order(@Cast("int64_t") long address);

        @MemberSetter
        native PpoArgs clip_ratio(double value);

        @MemberSetter
        native PpoArgs value_clip(@Cast("bool") boolean value);

        @MemberSetter
        native PpoArgs value_weight(double value);

        @MemberSetter
        native PpoArgs entropy_weight(double value);

        @MemberSetter
        native PpoArgs adv_norm(@Cast("bool") boolean value);

        @MemberSetter
        native PpoArgs max_grad_norm(double value);

        /** @return the field itself (a view into this struct, no copy) */
        @MemberGetter
        @ByRef
        native AdamArgs adam();
    }

    /** {@code ding4j::ppo_detail::Stats}: an array of them, one per minibatch, read by name at a position. */
    @Name("ppo_detail::Stats")
    static final class PpoStats extends Pointer
    {
        static
        {
            Natives.load();
        }

        PpoStats(final long count)
        {
            allocateArray(count);
        }

        private native void allocateArray(long count);

        @Override
        public PpoStats position(final long position)
        {
            return (PpoStats)super.position(position);
        }

        @MemberGetter
        native double policy_loss();

        @MemberGetter
        native double value_loss();

        @MemberGetter
        native double entropy();

        @MemberGetter
        native double approx_kl();

        @MemberGetter
        native double clip_fraction();

        @MemberGetter
        native double grad_norm();

        @MemberGetter
        native double total_loss();
    }

    /**
     * {@code ding4j::ac_detail::Args}: one TD3 or SAC update's buffers (data_ptr() addresses) and constants, set by
     * name; each setter returns this for chaining.
     */
    @Name("ac_detail::Args")
    static final class AcArgs extends Pointer
    {
        static
        {
            Natives.load();
        }

        AcArgs()
        {
            allocate();
        }

        private native void allocate();

        @MemberSetter
        native AcArgs actor(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs actor_grad(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs actor_target(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs critic(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs critic_grad(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs critic_target(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs obs(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs action(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs reward(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs next_obs(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs not_done(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs noise(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs noise2(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs actor_exp_avg(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs actor_exp_avg_sq(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs critic_exp_avg(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs critic_exp_avg_sq(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs log_alpha(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs log_alpha_grad(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs alpha_exp_avg(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs alpha_exp_avg_sq(@Cast("int64_t") long address);

        @MemberSetter
        native AcArgs gamma(double value);

        @MemberSetter
        native AcArgs tau(double value);

        @MemberSetter
        native AcArgs actor_turn(@Cast("bool") boolean value);

        @MemberSetter
        native AcArgs auto_alpha(@Cast("bool") boolean value);

        @MemberSetter
        native AcArgs target_entropy(double value);

        /** @return the field itself (a view into this struct, no copy) */
        @MemberGetter
        @ByRef
        native AdamArgs actor_adam();

        /** @return the field itself (a view into this struct, no copy) */
        @MemberGetter
        @ByRef
        native AdamArgs critic_adam();

        /** @return the field itself (a view into this struct, no copy) */
        @MemberGetter
        @ByRef
        native AdamArgs alpha_adam();
    }

    /** {@code ding4j::AdamArgs}: one optimizer's settings and step, a field of {@link AcArgs} and {@link PpoArgs}. */
    @Name("AdamArgs")
    static final class AdamArgs extends Pointer
    {
        static
        {
            Natives.load();
        }

        /** Only the argument structs' getters make these: views of their fields. */
        private AdamArgs()
        {
        }

        /**
         * @param config the optimizer's settings
         * @param step   the step the kernel takes (its first, where it takes several)
         * @return this
         */
        AdamArgs set(final AdamConfig config, final long step)
        {
            return lr(config.lr()).beta1(config.beta1()).beta2(config.beta2()).eps(config.eps())
                .weight_decay(config.weightDecay()).decoupled(config.decoupled()).step(step);
        }

        @MemberSetter
        native AdamArgs lr(double value);

        @MemberSetter
        native AdamArgs beta1(double value);

        @MemberSetter
        native AdamArgs beta2(double value);

        @MemberSetter
        native AdamArgs eps(double value);

        @MemberSetter
        native AdamArgs weight_decay(double value);

        @MemberSetter
        native AdamArgs decoupled(@Cast("bool") boolean value);

        @MemberSetter
        native AdamArgs step(@Cast("int64_t") long value);
    }

    /** {@code ding4j::ac_detail::Stats}: what an update leaves for the log, read by name. */
    @Name("ac_detail::Stats")
    static final class AcStats extends Pointer
    {
        static
        {
            Natives.load();
        }

        AcStats()
        {
            allocate();
        }

        private native void allocate();

        @MemberGetter
        native double critic_loss();

        @MemberGetter
        native double q();

        @MemberGetter
        native double target_q();

        @MemberGetter
        native double actor_loss();

        @MemberGetter
        native double alpha_loss();

        @MemberGetter
        native double alpha();

        @MemberGetter
        native double log_prob();
    }

    /** {@code ding4j::dqn_detail::Stats}: what a DQN update or an MLP step leaves for the log, read by name. */
    @Name("dqn_detail::Stats")
    static final class DqnStats extends Pointer
    {
        static
        {
            Natives.load();
        }

        DqnStats()
        {
            allocate();
        }

        private native void allocate();

        @MemberGetter
        native double loss();

        @MemberGetter
        native double q();

        @MemberGetter
        native double target_q();
    }
}
