// ding4j small-batch forward of an MLP (an actor, a Q-net with a dueling head) for acting and serving: batch 1 to a
// few rows, where a GEMM library's set-up costs more than the arithmetic (a batch-1 libtorch forward of a 64-wide
// actor takes ~50 us; the multiply-adds take well under 1 us).
//
// Layer: a dense layer's forward over weights packed for it: the weight transposed to [in][out_pad] and the bias
// after it, out_pad = out rounded up to 16 floats with zeros. Each pass keeps up to 128 outputs in registers, takes
// one input at a time (broadcast) and one contiguous row of the packed weight, so that no horizontal sum is needed
// and the same code serves in = 3 and in = 256. AVX-512, AVX2+FMA and plain C++ variants stand side by side; one is
// picked once per process from what the CPU reports.
// Model: a list of such layers, each reading the observation or an earlier layer's output, and optionally the dueling
// combination Q = V + (A - mean A) of the last layers; one call runs every row.
//
// Java (org.ding4j.torch.PackedMlp) checks the plan and sizes every buffer; nothing here checks an address.
#ifndef DING4J_DENSE_H
#define DING4J_DENSE_H

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__CUDACC__)
#include <immintrin.h>
#define DING4J_DENSE_X86 1
#endif

namespace ding4j {

namespace dense_detail {

enum { IDENTITY = 0, RELU = 1, TANH = 2 };
// One layer of a plan: where its weight and bias are in the flat parameters, its widths and activation, where its
// input comes from (-1: the observation row; k: layer k's output) and where its packed copy starts.
enum { W, B, IN, OUT, ACT, SRC, PACKED, FIELDS };
const int PAD = 16;

inline int64_t padded(const int64_t out) {
    return (out + PAD - 1) / PAD * PAD;
}

typedef void (*layer_t)(const float*, int, int, const float*, float*);

/** y[0, op) = b + x[0, in) Wt with the packed layer p (Wt then b); op a multiple of 16. */
inline void layer_plain(const float* __restrict__ p, const int in, const int op, const float* __restrict__ x,
                        float* __restrict__ y) {
    std::memcpy(y, p + static_cast<int64_t>(in) * op, sizeof(float) * op);
    for (int i = 0; i < in; i++) {
        const float xi = x[i];
        const float* row = p + static_cast<int64_t>(i) * op;
        for (int o = 0; o < op; o++) {
            y[o] += row[o] * xi;
        }
    }
}

#if defined(DING4J_DENSE_X86)
/** N registers of 16 outputs, from output o0: the accumulators stay in zmm registers for the whole input loop. */
template <int N>
__attribute__((target("avx512f"))) inline void block_avx512(const float* p, const int in, const int op, const int o0,
                                                            const float* x, float* y) {
    __m512 acc[N];
    const float* bias = p + static_cast<int64_t>(in) * op + o0;
    for (int k = 0; k < N; k++) {
        acc[k] = _mm512_loadu_ps(bias + 16 * k);
    }
    for (int i = 0; i < in; i++) {
        const __m512 xi = _mm512_set1_ps(x[i]);
        const float* row = p + static_cast<int64_t>(i) * op + o0;
        for (int k = 0; k < N; k++) {
            acc[k] = _mm512_fmadd_ps(_mm512_loadu_ps(row + 16 * k), xi, acc[k]);
        }
    }
    for (int k = 0; k < N; k++) {
        _mm512_storeu_ps(y + o0 + 16 * k, acc[k]);
    }
}

__attribute__((target("avx512f"))) inline void layer_avx512(const float* p, const int in, const int op,
                                                            const float* x, float* y) {
    int o0 = 0;
    for (; o0 + 128 <= op; o0 += 128) {
        block_avx512<8>(p, in, op, o0, x, y);
    }
    switch ((op - o0) / 16) {
        case 1: block_avx512<1>(p, in, op, o0, x, y); break;
        case 2: block_avx512<2>(p, in, op, o0, x, y); break;
        case 3: block_avx512<3>(p, in, op, o0, x, y); break;
        case 4: block_avx512<4>(p, in, op, o0, x, y); break;
        case 5: block_avx512<5>(p, in, op, o0, x, y); break;
        case 6: block_avx512<6>(p, in, op, o0, x, y); break;
        case 7: block_avx512<7>(p, in, op, o0, x, y); break;
        default: break;
    }
}

/** N pairs of 8-wide registers (16 outputs each), from output o0. */
template <int N>
__attribute__((target("avx2,fma"))) inline void block_avx2(const float* p, const int in, const int op, const int o0,
                                                           const float* x, float* y) {
    __m256 acc[2 * N];
    const float* bias = p + static_cast<int64_t>(in) * op + o0;
    for (int k = 0; k < 2 * N; k++) {
        acc[k] = _mm256_loadu_ps(bias + 8 * k);
    }
    for (int i = 0; i < in; i++) {
        const __m256 xi = _mm256_broadcast_ss(x + i);
        const float* row = p + static_cast<int64_t>(i) * op + o0;
        for (int k = 0; k < 2 * N; k++) {
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(row + 8 * k), xi, acc[k]);
        }
    }
    for (int k = 0; k < 2 * N; k++) {
        _mm256_storeu_ps(y + o0 + 8 * k, acc[k]);
    }
}

__attribute__((target("avx2,fma"))) inline void layer_avx2(const float* p, const int in, const int op,
                                                           const float* x, float* y) {
    int o0 = 0;
    for (; o0 + 64 <= op; o0 += 64) {
        block_avx2<4>(p, in, op, o0, x, y);
    }
    switch ((op - o0) / 16) {
        case 1: block_avx2<1>(p, in, op, o0, x, y); break;
        case 2: block_avx2<2>(p, in, op, o0, x, y); break;
        case 3: block_avx2<3>(p, in, op, o0, x, y); break;
        default: break;
    }
}
#endif

/** Variants by number: 0 plain C++, 1 AVX2+FMA, 2 AVX-512. */
enum { PLAIN = 0, AVX2 = 1, AVX512 = 2 };

inline bool supports(const int variant) {
#if defined(DING4J_DENSE_X86)
    if (AVX512 == variant) {
        return __builtin_cpu_supports("avx512f");
    }
    if (AVX2 == variant) {
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
#endif
    return PLAIN == variant;
}

inline layer_t layer_of(const int variant) {
#if defined(DING4J_DENSE_X86)
    if (AVX512 == variant) {
        return layer_avx512;
    }
    if (AVX2 == variant) {
        return layer_avx2;
    }
#endif
    return layer_plain;
}

/** The widest variant this CPU runs, asked once per process. */
inline int widest() {
    static const int chosen = supports(AVX512) ? AVX512 : supports(AVX2) ? AVX2 : PLAIN;
    return chosen;
}

}  // namespace dense_detail

/**
 * @return whether this CPU runs the variant (0 plain C++, 1 AVX2+FMA, 2 AVX-512); -1 asks for the variant that
 *     dense_forward picks by default.
 */
inline int32_t dense_variant(const int32_t variant) {
    if (variant < 0) {
        return dense_detail::widest();
    }
    return dense_detail::supports(variant) ? 1 : 0;
}

/** Packs every layer of the plan from the flat parameters (PyTorch's Linear layout) into its packed place. */
inline void dense_pack(const int64_t plan_address, const int32_t layers, const int64_t params_address,
                       const int64_t packed_address) {
    using namespace dense_detail;
    const int64_t* plan = reinterpret_cast<const int64_t*>(plan_address);
    const float* params = reinterpret_cast<const float*>(params_address);
    float* packed = reinterpret_cast<float*>(packed_address);
    for (int l = 0; l < layers; l++) {
        const int64_t* f = plan + FIELDS * l;
        const int64_t in = f[IN];
        const int64_t out = f[OUT];
        const int64_t op = padded(out);
        const float* w = params + f[W];
        const float* b = params + f[B];
        float* dst = packed + f[PACKED];
        std::memset(dst, 0, sizeof(float) * (in + 1) * op);
        for (int64_t o = 0; o < out; o++) {
            for (int64_t i = 0; i < in; i++) {
                dst[i * op + o] = w[o * in + i];
            }
            dst[in * op + o] = b[o];
        }
    }
}

/**
 * The plan's forward on each observation row: out receives the last layer's outputs (out_width per row), or with
 * dueling != 0 Q = V + (A - mean A) of the layers layers-3 (A) and layers-1 (V, one output). scratch holds every
 * layer's padded output for one row. variant < 0 runs the widest variant this CPU has; Java passes another only
 * after dense_variant said the CPU runs it.
 */
inline void dense_forward(const int64_t plan_address, const int32_t layers, const int32_t dueling,
                          const int64_t packed_address, const int64_t obs_address, const int32_t rows,
                          const int64_t scratch_address, const int64_t out_address, const int32_t variant) {
    using namespace dense_detail;
    const int64_t* plan = reinterpret_cast<const int64_t*>(plan_address);
    const float* packed = reinterpret_cast<const float*>(packed_address);
    const float* obs = reinterpret_cast<const float*>(obs_address);
    float* scratch = reinterpret_cast<float*>(scratch_address);
    float* out = reinterpret_cast<float*>(out_address);
    const layer_t layer = layer_of(variant < 0 ? widest() : variant);
    const int64_t obs_width = plan[IN];
    // Where each layer's output sits in scratch; at most 64 layers (Java checks).
    int64_t at[64];
    int64_t next = 0;
    for (int l = 0; l < layers; l++) {
        at[l] = next;
        next += padded(plan[FIELDS * l + OUT]);
    }
    const int adv = 0 != dueling ? layers - 3 : layers - 1;
    const int64_t width = plan[FIELDS * adv + OUT];
    for (int r = 0; r < rows; r++) {
        for (int l = 0; l < layers; l++) {
            const int64_t* f = plan + FIELDS * l;
            const float* x = f[SRC] < 0 ? obs + r * obs_width : scratch + at[f[SRC]];
            float* y = scratch + at[l];
            const int op = static_cast<int>(padded(f[OUT]));
            layer(packed + f[PACKED], static_cast<int>(f[IN]), op, x, y);
            if (RELU == f[ACT]) {
                for (int o = 0; o < op; o++) {
                    y[o] = y[o] > 0.0f ? y[o] : 0.0f;
                }
            } else if (TANH == f[ACT]) {
                for (int o = 0; o < op; o++) {
                    y[o] = std::tanh(y[o]);
                }
            }
        }
        const float* a = scratch + at[adv];
        float* q = out + r * width;
        if (0 == dueling) {
            std::memcpy(q, a, sizeof(float) * width);
            continue;
        }
        // As the Q-network's dueling head: the mean of A in float, summed in order.
        const float v = scratch[at[layers - 1]];
        float mean = 0.0f;
        for (int64_t k = 0; k < width; k++) {
            mean += a[k];
        }
        mean /= static_cast<float>(width);
        for (int64_t k = 0; k < width; k++) {
            q[k] = v + (a[k] - mean);
        }
    }
}

}  // namespace ding4j

#endif  // DING4J_DENSE_H
