// ding4j native kernels: fused optimizer steps and gradient norms over flat float32 buffers.
//
// The JavaCPP presets jars ship no libtorch headers, so these kernels work on raw data_ptr() addresses of
// contiguous float tensors. Java (org.ding4j.torch) validates every argument before calling in: a kernel
// here never sees a null address, a negative length or a NaN hyper-parameter.
//
// Each update follows libtorch's own C++ optimizers (torch/csrc/api/src/optim/{adam,adamw,sgd}.cpp) operation
// by operation, in float32 with double-precision scalars cast to float where libtorch casts them, so that a
// fused step matches torch::optim within float rounding. The only fusion is that one pass does what libtorch
// does in five to seven tensor ops per parameter.
#ifndef DING4J_KERNELS_H
#define DING4J_KERNELS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__GLIBC__)
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <unistd.h>
#endif

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__CUDACC__)
// One binary, three code paths: glibc's ifunc picks the AVX-512 clone, else the AVX2 one, on machines that have it.
#define DING4J_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DING4J_VECTOR_CLONES
#endif

namespace ding4j {

/**
 * Sum of squares of n floats, accumulated in double so that the norm of a large buffer keeps its digits. Eight
 * independent partial sums let the loop vectorise and hide the add latency (the order differs from libtorch's
 * vectorised reduction by rounding only).
 */
DING4J_VECTOR_CLONES
inline double sum_squares(const int64_t grad_address, const int64_t n) {
    const float* __restrict__ const g = reinterpret_cast<const float*>(grad_address);
    double partial[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; k++) {
            const double v = g[i + k];
            partial[k] += v * v;
        }
    }
    double sum = 0.0;
    for (; i < n; i++) {
        const double v = g[i];
        sum += v * v;
    }
    for (int k = 0; k < 8; k++) {
        sum += partial[k];
    }
    return sum;
}

/**
 * Bytes the C allocator has handed out and not taken back (glibc's mallinfo2: arena plus mmap-ed blocks), or -1
 * where that is unknown. Unlike RSS it does not hide a leak behind memory freed earlier and kept for reuse.
 */
inline int64_t malloc_in_use_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 info = mallinfo2();
    return static_cast<int64_t>(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

#if defined(__GLIBC__)
/** The on_exit handler of exit_without_later_destructors: C stdio flushed, then the process ends with exit's status. */
inline void end_process_now(const int status, void*) {
    std::fflush(nullptr);
    _exit(status);
}
#endif

/**
 * From now on the process's exit() skips the exit handlers and C++ static destructors of every library loaded before
 * this call: on_exit handlers run in the reverse order of registration, so this one runs first and ends the process
 * with exit()'s status. libtorch's destructors deregister each of its operators (about 75 ms of every exit here);
 * the memory and threads they release go with the process anyway. Returns 0, or -1 where on_exit is missing.
 */
inline int exit_without_later_destructors() {
#if defined(__GLIBC__)
    return on_exit(end_process_now, nullptr);
#else
    return -1;
#endif
}

/** Sets n bytes to zero: clears a CPU gradient buffer of any dtype (all-zero bits are 0.0) without a Tensor op. */
inline void fill_zero(const int64_t address, const int64_t bytes) {
    std::memset(reinterpret_cast<void*>(address), 0, static_cast<size_t>(bytes));
}

namespace detail {

// One loop per (weight-decay form, AMSGrad) combination: no branch inside, restrict pointers, so that gcc
// vectorises each (sqrt and div included, given -fno-math-errno).
template <bool L2, bool SHRINK, bool AMSGRAD>
DING4J_VECTOR_CLONES
inline void adam_loop(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                      float* __restrict__ v, float* __restrict__ vmax, const int64_t n, const float step_size,
                      const float sqrt_bias_correction2, const float b1, const float b2, const float one_minus_b1,
                      const float one_minus_b2, const float e, const float wd, const float decay,
                      const float grad_scale) {
    for (int64_t i = 0; i < n; i++) {
        float pi = p[i];
        float gi = g[i] * grad_scale;
        if (SHRINK) {
            pi = pi * decay;
        }
        if (L2) {
            gi = gi + wd * pi;
        }
        const float mi = m[i] * b1 + one_minus_b1 * gi;
        const float vi = v[i] * b2 + one_minus_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float second = vi;
        if (AMSGRAD) {
            second = vmax[i] > vi ? vmax[i] : vi;
            vmax[i] = second;
        }
        const float denom = std::sqrt(second) / sqrt_bias_correction2 + e;
        p[i] = pi - step_size * (mi / denom);
    }
}

}  // namespace detail

/**
 * One Adam or AdamW step over n elements.
 *
 * grad_scale multiplies the gradient before anything else (1 when no clipping applies), which is what
 * torch.nn.utils.clip_grad_norm_ does to the gradient in place before optimizer.step().
 * decoupled != 0 is AdamW: p *= 1 - lr * weight_decay first; otherwise weight decay is L2, grad += wd * p.
 * max_exp_avg_sq_address is used only when amsgrad != 0.
 */
inline void adam_step(
    const int64_t param_address, const int64_t grad_address, const int64_t exp_avg_address,
    const int64_t exp_avg_sq_address, const int64_t max_exp_avg_sq_address, const int64_t n,
    const double lr, const double beta1, const double beta2, const double eps, const double weight_decay,
    const int64_t step, const int amsgrad, const int decoupled, const float grad_scale) {
    float* const p = reinterpret_cast<float*>(param_address);
    const float* const g = reinterpret_cast<const float*>(grad_address);
    float* const m = reinterpret_cast<float*>(exp_avg_address);
    float* const v = reinterpret_cast<float*>(exp_avg_sq_address);
    float* const vmax = reinterpret_cast<float*>(max_exp_avg_sq_address);

    // libtorch computes these in double and hands them to float kernels as Scalars.
    const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
    const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
    const float step_size = static_cast<float>(lr / bias_correction1);
    const float sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
    const float b1 = static_cast<float>(beta1);
    const float b2 = static_cast<float>(beta2);
    const float one_minus_b1 = static_cast<float>(1.0 - beta1);
    const float one_minus_b2 = static_cast<float>(1.0 - beta2);
    const float e = static_cast<float>(eps);
    const float wd = static_cast<float>(weight_decay);
    const float decay = static_cast<float>(1.0 - lr * weight_decay);
    const bool l2 = 0 == decoupled && 0.0 != weight_decay;
    const bool shrink = 0 != decoupled && 0.0 != weight_decay;

#define DING4J_ADAM(L2, SHRINK, AMS) \
    detail::adam_loop<L2, SHRINK, AMS>(p, g, m, v, vmax, n, step_size, sqrt_bias_correction2, b1, b2, \
                                       one_minus_b1, one_minus_b2, e, wd, decay, grad_scale)
    if (0 != amsgrad) {
        if (l2) {
            DING4J_ADAM(true, false, true);
        } else if (shrink) {
            DING4J_ADAM(false, true, true);
        } else {
            DING4J_ADAM(false, false, true);
        }
    } else {
        if (l2) {
            DING4J_ADAM(true, false, false);
        } else if (shrink) {
            DING4J_ADAM(false, true, false);
        } else {
            DING4J_ADAM(false, false, false);
        }
    }
#undef DING4J_ADAM
}

/**
 * One Adam's settings and the step count it takes next, as the fused algorithms receive them (a field of their
 * argument structs, set from Java by name).
 */
struct AdamArgs {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0.0;
    bool decoupled = false;
    int64_t step = 1;
};

/** adam_step with a's settings (not AMSGrad) at step a.step + step_offset. */
inline void adam_step(const AdamArgs& a, const int64_t param, const int64_t grad, const int64_t exp_avg,
    const int64_t exp_avg_sq, const int64_t n, const int64_t step_offset, const float grad_scale) {
    adam_step(param, grad, exp_avg, exp_avg_sq, 0, n, a.lr, a.beta1, a.beta2, a.eps, a.weight_decay,
        a.step + step_offset, 0, a.decoupled ? 1 : 0, grad_scale);
}

/**
 * One SGD step over n elements, libtorch's semantics: L2 weight decay into the gradient; the momentum buffer
 * is a copy of the gradient on the first step (first != 0) and buf = momentum * buf + (1 - dampening) * d_p
 * afterwards; Nesterov uses d_p + momentum * buf. momentum_address is ignored when momentum == 0.
 */
DING4J_VECTOR_CLONES
inline void sgd_step(
    const int64_t param_address, const int64_t grad_address, const int64_t momentum_address, const int64_t n,
    const double lr, const double momentum, const double dampening, const double weight_decay,
    const int nesterov, const int first, const float grad_scale) {
    float* __restrict__ const p = reinterpret_cast<float*>(param_address);
    const float* __restrict__ const g = reinterpret_cast<const float*>(grad_address);
    float* __restrict__ const buf = reinterpret_cast<float*>(momentum_address);
    const float mu = static_cast<float>(momentum);
    const float one_minus_dampening = static_cast<float>(1.0 - dampening);
    const float wd = static_cast<float>(weight_decay);
    const float neg_lr = static_cast<float>(-1.0 * lr);
    const bool has_momentum = 0.0 != momentum;

    for (int64_t i = 0; i < n; i++) {
        const float pi = p[i];
        float d = g[i] * grad_scale;
        if (0.0f != wd) {
            d = d + wd * pi;
        }
        if (has_momentum) {
            const float b = 0 != first ? d : buf[i] * mu + one_minus_dampening * d;
            buf[i] = b;
            d = 0 != nesterov ? d + mu * b : b;
        }
        p[i] = pi + neg_lr * d;
    }
}

}  // namespace ding4j

// native/ is layered as layer -> model -> algorithm: ding4j_layers.h (a linear layer, its backward, the
// activations), ding4j_mlp.h (an MLP's forward and backward over them), then the fused algorithms on top
// (ding4j_dqn.h: DQN and the supervised MLP step; ding4j_ac.h: TD3 and SAC; ding4j_ppo.h: PPO), beside
// ding4j_dense.h, the batch-1 acting forward with its AVX-512, AVX2+FMA and plain variants side by side. JavaCPP
// compiles the kernels from this header.
#include "ding4j_dqn.h"
#include "ding4j_ac.h"
#include "ding4j_dense.h"
#include "ding4j_ppo.h"

#endif  // DING4J_KERNELS_H
