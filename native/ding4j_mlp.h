// The model level between ding4j_layers.h's layers (linear, linear_backward, activation_backward) and the fused
// algorithms (ding4j_ac.h's TD3 and SAC, ding4j_ppo.h's PPO): a plain MLP (the activation of layer::Ops between the
// layers, none after the last) at offsets in a flat parameter buffer, its forward with every layer's output kept for
// the backward, and that backward into the parameter gradients and/or the gradient at the input.
#ifndef DING4J_MLP_H
#define DING4J_MLP_H

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "ding4j_layers.h"

namespace ding4j {

namespace mlp_model {

using layer::Linear;
using layer::Ops;

/** An MLP's layers at offsets in its flat buffer, with each layer's output of the last forward. */
struct Mlp {
    std::vector<Linear> layers;
    std::vector<std::vector<float>> out;  // each layer's output (activated but the last's), rows x width

    /** Appends layers widths[0] -> ... -> widths[count]; offsets holds weight and bias of each; returns the widest. */
    int add(const int64_t* widths, const int count, const int64_t* offsets, const int64_t rows) {
        int widest = 0;
        for (int l = 0; l < count; l++) {
            layers.push_back(Linear{(int)widths[l], (int)widths[l + 1], offsets[2 * l], offsets[2 * l + 1]});
            out.emplace_back(rows * widths[l + 1]);
            widest = std::max(widest, (int)std::max(widths[l], widths[l + 1]));
        }
        return widest;
    }
};

/**
 * Checks the sizes of an actor-critic layout, dims = [kind, rows, obs, act, La, Lc, La + 1 actor widths, Lc + 1
 * critic widths] (ac_create's and ppo_create's): both layer counts in [1, 64] and every size in [1, 2^24]. Whether the
 * kind is known and the widths chain is each algorithm's to check.
 */
inline bool actor_critic_sizes_ok(const int64_t* dims) {
    const int64_t la = dims[4];
    const int64_t lc = dims[5];
    return la >= 1 && la <= 64 && lc >= 1 && lc <= 64 && layer::sizes_ok(dims + 1, 3)
        && layer::sizes_ok(dims + 6, (int)(la + 1 + lc + 1));
}

/** A forward of rows inputs with the given parameters; returns the last layer's output (inside m.out). */
inline const float* forward(const Ops& ops, Mlp& m, const float* params, const float* x, const int rows) {
    const size_t last = m.layers.size() - 1;
    for (size_t l = 0; l <= last; l++) {
        layer::linear(ops, m.layers[l], params, x, m.out[l].data(), rows, l < last);
        x = m.out[l].data();
    }
    return m.out[last].data();
}

/**
 * Backward of the last forward from dy at the last output: parameter gradients into grads (overwritten) when grads
 * is not null, and the gradient at the input into dx_in when dx_in is not null (the first layer's input is not
 * activated). gh and gh2 hold rows x the widest layer each: the gradients between layers.
 */
inline void backward(const Ops& ops, const Mlp& m, const float* params, float* grads, const float* input,
    const float* dy, float* dx_in, const int rows, float* gh, float* gh2) {
    const int last = (int)m.layers.size() - 1;
    float* cur = gh;
    float* other = gh2;
    for (int l = last; l >= 0; l--) {
        const Linear& layer = m.layers[l];
        const float* x = 0 == l ? input : m.out[l - 1].data();
        float* dx = 0 == l ? dx_in : cur;
        if (nullptr != grads) {
            layer::linear_backward(ops, layer, params, grads, x, dy, dx, 0 == l ? nullptr : x, rows);
        } else if (nullptr != dx) {
            // The gradient at the input alone: dX = dY W, then through the activation that produced x.
            ops.sgemm(layer::ROW_MAJOR, layer::NO_TRANS, layer::NO_TRANS, rows, layer.in, layer.out,
                1.0f, dy, layer.out, params + layer.w, layer.in, 0.0f, dx, layer.in);
            if (0 != l) {
                layer::activation_backward(ops, dx, x, (int64_t)rows * layer.in);
            }
        }
        dy = dx;
        std::swap(cur, other);
    }
}

}  // namespace mlp_model

}  // namespace ding4j

#endif  // DING4J_MLP_H
