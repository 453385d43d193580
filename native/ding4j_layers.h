// ding4j's layer level, under the MLP model (ding4j_mlp.h) and the fused algorithms (DQN, TD3/SAC, PPO): a linear
// layer at offsets in a flat parameter buffer, its forward through OpenBLAS's cblas_sgemm (the address comes from
// Java: Loader.addressof) with the bias and the hidden activation (ReLU, or a vectorised branch-free tanh) fused in,
// its backward, and the activations' backward. Loops are plain C++ that gcc vectorises; the ones that matter carry
// vector clones (AVX-512, AVX2, baseline), the widest the CPU runs picked at load time.
#ifndef DING4J_LAYERS_H
#define DING4J_LAYERS_H

#include <cmath>
#include <cstdint>
#include <cstring>

// ding4j_kernels.h defines it (AVX-512 and AVX2 clones beside the baseline code); included alone, one code path.
#ifndef DING4J_VECTOR_CLONES
#define DING4J_VECTOR_CLONES
#endif

namespace ding4j {

namespace layer {

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
/** The hidden activation, as Java's org.ding4j.torch.Activation ordinals. */
enum { RELU = 0, TANH = 1 };
typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
    int);

/** What every layer function needs: OpenBLAS's cblas_sgemm and the hidden activation (RELU or TANH). */
struct Ops {
    sgemm_t sgemm;
    int activation;
};

/** One linear layer: weight [out, in] and bias [out] at float offsets in the flat buffers. */
struct Linear {
    int in;
    int out;
    int64_t w;
    int64_t b;
};

/** e^v for 0 <= v <= 18: Cody-Waite reduction by ln 2, a degree-6 polynomial, the exponent set through its bits. */
inline float exp_small(const float v) {
    const float fn = (float)(int)(v * 1.44269504088896341f + 0.5f);
    const float r = (v - fn * 0.693359375f) - fn * -2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)fn + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

/**
 * tanh within 1.3 ulp of the exact value (checked on every 97th float of the finite range, both signs; +-1 for
 * large |x| and +-inf, NaN for NaN, as std::tanh), written without branches or calls so that the loop below vectorises:
 * std::tanh is a scalar libm call, ~15 ns per element here, and a Tanh net's three forwards make ~86k of them per
 * DQN update. An odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above (|x| clamped at 9, where tanh rounds to 1),
 * selected by a 0/1 factor rather than a branch. Both sides are computed from clamped arguments: the polynomial of an
 * unclamped x overflows to inf at |x| ~ 5100, and 0 * inf would make the select NaN.
 */
inline float tanh_fast(const float x) {
    const float fx = std::fabs(x);
    // NaN compares false: it takes the clamp's value here (exp_small must not see it) and is put back at the end.
    const float ax = fx < 9.0f ? fx : 9.0f;
    const float big = 1.0f - 2.0f / (exp_small(2.0f * ax) + 1.0f);
    const float xs = std::copysign(ax < 0.625f ? ax : 0.625f, x);
    const float z = xs * xs;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * xs + xs;
    const float use_small = ax < 0.625f ? 1.0f : 0.0f;
    const float y = use_small * small + (1.0f - use_small) * std::copysign(big, x);
    // NaN back in without a branch or a NaN-keyed select (either stops gcc vectorising the loop): this clamp keeps
    // NaN, so nan_or_zero is NaN for NaN and 0 for every other x, inf included.
    const float kept = fx > 9.0f ? 9.0f : fx;
    const float nan_or_zero = kept - kept;
    return y + nan_or_zero;
}

/** y = tanh(y) over count floats; the widest vector clone the CPU runs (AVX2: 1.4 vs 3.2 ns per element here). */
DING4J_VECTOR_CLONES
inline void tanh_in_place(float* __restrict__ y, const int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        y[i] = tanh_fast(y[i]);
    }
}

inline void linear(const Ops& n, const Linear& l, const float* params, const float* x, float* y, int rows,
    bool activate) {
    n.sgemm(ROW_MAJOR, NO_TRANS, TRANS, rows, l.out, l.in, 1.0f, x, l.in, params + l.w, l.in, 0.0f, y, l.out);
    const float* b = params + l.b;
    // One loop per case, so that the compiler vectorises each.
    for (int i = 0; i < rows; i++) {
        float* yi = y + (int64_t)i * l.out;
        if (!activate) {
            for (int j = 0; j < l.out; j++) {
                yi[j] += b[j];
            }
        } else if (RELU == n.activation) {
            for (int j = 0; j < l.out; j++) {
                const float v = yi[j] + b[j];
                yi[j] = v < 0.0f ? 0.0f : v;
            }
        } else {
            for (int j = 0; j < l.out; j++) {
                yi[j] += b[j];
            }
        }
    }
    if (activate && TANH == n.activation) {
        tanh_in_place(y, (int64_t)rows * l.out);
    }
}

/** dX *= f'(at the saved activation y) over count floats, one vector clone per activation (ReLU, Tanh). */
template <int ACTIVATION>
DING4J_VECTOR_CLONES
inline void activation_backward_loop(float* __restrict__ dx, const float* __restrict__ y, const int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        dx[i] = RELU == ACTIVATION ? (y[i] <= 0.0f ? 0.0f : dx[i]) : dx[i] * (1.0f - y[i] * y[i]);
    }
}

/** dX *= f'(at the saved activation y): ReLU passes where y > 0, Tanh scales by 1 - y^2. */
inline void activation_backward(const Ops& n, float* dx, const float* y, const int64_t count) {
    if (RELU == n.activation) {
        activation_backward_loop<RELU>(dx, y, count);
    } else {
        activation_backward_loop<TANH>(dx, y, count);
    }
}

/**
 * Backward through one layer: dW = dY^T X, db = sum dY, and (if dx) dX = dY W, through the activation that produced
 * x when activated_x is given (x itself: the saved activation).
 */
inline void linear_backward(const Ops& n, const Linear& l, const float* params, float* grads, const float* x,
    const float* dy, float* dx, const float* activated_x, int rows) {
    n.sgemm(ROW_MAJOR, TRANS, NO_TRANS, l.out, l.in, rows, 1.0f, dy, l.out, x, l.in, 0.0f, grads + l.w, l.in);
    float* db = grads + l.b;
    for (int j = 0; j < l.out; j++) {
        db[j] = 0.0f;
    }
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < l.out; j++) {
            db[j] += dy[(int64_t)i * l.out + j];
        }
    }
    if (nullptr == dx) {
        return;
    }
    n.sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, rows, l.in, l.out, 1.0f, dy, l.out, params + l.w, l.in, 0.0f, dx, l.in);
    if (nullptr != activated_x) {
        activation_backward(n, dx, activated_x, (int64_t)rows * l.in);
    }
}

/** Whether n sizes from dims are all in [1, 2^24]: widths and batch sizes beyond that are no MLP's here. */
inline bool sizes_ok(const int64_t* dims, const int n) {
    for (int i = 0; i < n; i++) {
        if (dims[i] < 1 || dims[i] > (1 << 24)) {
            return false;
        }
    }
    return true;
}

}  // namespace layer

}  // namespace ding4j

#endif  // DING4J_LAYERS_H
