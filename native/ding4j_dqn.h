// ding4j fused updates for MLP-family networks (a DQN Q-network's, a supervised MLP's; ReLU or Tanh between the
// Linear layers): the whole update of DqnPolicy (three forwards, the double-DQN
// target, MSE or Huber loss with importance weights, backward) in one native call over the flat parameter and
// gradient buffers that libtorch's modules view, with every matrix product done by the cblas_sgemm of the OpenBLAS
// that the presets load (its address comes from Java: Loader.addressof). libtorch runs the same arithmetic one
// operator at a time; here the per-operator cost (dispatch, allocation, autograd bookkeeping) is gone, and the
// workspace is allocated once per batch size. Results equal libtorch's within float rounding (the order of a few
// sums differs); DqnPolicyFusedTest compares them.
#ifndef DING4J_DQN_H
#define DING4J_DQN_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ding4j_layers.h"

namespace ding4j {

namespace dqn_detail {

using layer::Linear;
using layer::NO_TRANS;
using layer::RELU;
using layer::ROW_MAJOR;
using layer::TANH;
using layer::TRANS;
using layer::activation_backward;
using layer::linear;
using layer::linear_backward;
using layer::sgemm_t;
using layer::sizes_ok;

/**
 * What an update leaves for the log, by name (Java reads the fields through JavaCPP: NativeKernels.DqnStats): the
 * loss, and for DQN the mean Q and the mean target-net Q at the next observations.
 */
struct Stats {
    double loss = 0.0;
    double q = 0.0;
    double target_q = 0.0;
};

/** A DQN Q-network (or a plain MLP for mlp_step): its layers, the GEMM and activation, and its workspace. */
struct Net : layer::Ops {
    int batch;
    int actions;
    bool dueling;
    bool huber;
    std::vector<Linear> encoder;
    Linear a1, a2, v1, v2;
    // Workspace, sized once: activations of the online forward on obs, their gradients, scratch for the two next
    // forwards.
    std::vector<std::vector<float>> enc;      // encoder outputs (after ReLU), one per layer
    std::vector<float> ha, hv, qa, qv, q;     // head hidden (A, V), head outputs, Q
    std::vector<float> ga, gv, gqa, gqv, gh, gh2;
    std::vector<std::vector<float>> scratch;  // encoder outputs for the next-obs forwards
    std::vector<float> sha, shv, sqa, sqv, qnext, qtarget;
    // The staged backward (backward_stage): what the last *_begin bound, and how far it got. Stage s finishes the
    // layers whose entry in finish_order is s; frontier_order lists every layer's lowest offset, highest first.
    bool mlp = false;
    int stages = 0;
    int next_stage = -1;  // -1: no begin since the last complete backward
    const float* cur_params = nullptr;
    float* cur_grads = nullptr;
    const float* cur_input = nullptr;
    int64_t numel = 0;
    std::vector<std::pair<int64_t, int>> frontier_order;  // (lowest offset of a layer, the stage that finishes it)
};

/** Huber's slope beyond delta 1: the sign of d, and NaN for NaN (as libtorch), so that a divergence shows. */
inline float huber_slope(const float d) {
    return d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : d);
}

/** Q-values of rows observations; the encoder and head outputs land in the given buffers. */
inline void forward(const Net& n, const float* params, const float* obs, int rows,
    std::vector<std::vector<float>>& enc, std::vector<float>& ha, std::vector<float>& hv, std::vector<float>& qa,
    std::vector<float>& qv, float* q) {
    const float* x = obs;
    for (size_t l = 0; l < n.encoder.size(); l++) {
        linear(n, n.encoder[l], params, x, enc[l].data(), rows, true);
        x = enc[l].data();
    }
    linear(n, n.a1, params, x, ha.data(), rows, true);
    linear(n, n.a2, params, ha.data(), n.dueling ? qa.data() : q, rows, false);
    if (!n.dueling) {
        return;
    }
    linear(n, n.v1, params, x, hv.data(), rows, true);
    linear(n, n.v2, params, hv.data(), qv.data(), rows, false);
    // Q = V + (A - mean_a A), in libtorch's order of operations.
    for (int i = 0; i < rows; i++) {
        const float* a = qa.data() + (int64_t)i * n.actions;
        float sum = 0.0f;
        for (int k = 0; k < n.actions; k++) {
            sum += a[k];
        }
        const float mean = sum / (float)n.actions;
        for (int k = 0; k < n.actions; k++) {
            q[(int64_t)i * n.actions + k] = qv[i] + (a[k] - mean);
        }
    }
}

inline Net* new_net(const int64_t sgemm_address) {
    Net* n = new Net();
    n->sgemm = reinterpret_cast<sgemm_t>(sgemm_address);
    return n;
}

/** Records that stage finishes layer l (for the frontier) and widens numel to cover it. */
inline void finished_by(Net& n, const Linear& l, const int stage) {
    const int64_t lo = l.w < l.b ? l.w : l.b;
    n.frontier_order.emplace_back(lo, stage);
    const int64_t end_w = l.w + (int64_t)l.out * l.in;
    const int64_t end_b = l.b + l.out;
    n.numel = end_w > n.numel ? end_w : n.numel;
    n.numel = end_b > n.numel ? end_b : n.numel;
}

/** Sorts the frontier entries by offset, highest first, once all layers are recorded. */
inline void sort_frontier(Net& n) {
    std::sort(n.frontier_order.begin(), n.frontier_order.end(),
        [](const std::pair<int64_t, int>& a, const std::pair<int64_t, int>& b) { return a.first > b.first; });
}

/**
 * The lowest offset from which every gradient is final once stages 0..done have run: layers are contiguous in the
 * flat buffer, so it is the lowest offset of the run of finished layers at its top (numel when none).
 */
inline int64_t frontier(const Net& n, const int done) {
    int64_t at = n.numel;
    for (const std::pair<int64_t, int>& e : n.frontier_order) {
        if (e.second > done) {
            break;
        }
        at = e.first;
    }
    return at;
}

}  // namespace dqn_detail

/**
 * Builds a fused DQN update. dims: [encoder layers L, obs, hidden_1..hidden_L, actions, dueling (0/1), batch,
 * activation (RELU or TANH)];
 * offsets (floats into the flat buffer): weight and bias of each encoder layer, then head A (or Q) first and
 * second layer, then, when dueling, head V first and second layer. Returns a handle for dqn_update / dqn_free, or 0
 * when a size is outside [1, 2^24], the layer count outside [1, 64], or the activation or dueling flag unknown
 * (nothing allocated).
 */
inline int64_t dqn_create(const int64_t sgemm_address, const int64_t dims_address, const int64_t offsets_address) {
    using namespace dqn_detail;
    const int64_t* dims = reinterpret_cast<const int64_t*>(dims_address);
    const int64_t* offsets = reinterpret_cast<const int64_t*>(offsets_address);
    if (dims[0] < 1 || dims[0] > 64 || !sizes_ok(dims + 1, (int)dims[0] + 2) || dims[3 + dims[0]] < 0
        || dims[3 + dims[0]] > 1 || !sizes_ok(dims + 4 + dims[0], 1) || (RELU != dims[5 + dims[0]]
        && TANH != dims[5 + dims[0]])) {
        return 0;
    }
    Net* n = new_net(sgemm_address);
    const int layers = (int)dims[0];
    int in = (int)dims[1];
    int o = 0;
    for (int l = 0; l < layers; l++) {
        const int out = (int)dims[2 + l];
        n->encoder.push_back(Linear{in, out, offsets[o], offsets[o + 1]});
        o += 2;
        in = out;
    }
    n->actions = (int)dims[2 + layers];
    n->dueling = 0 != dims[3 + layers];
    n->batch = (int)dims[4 + layers];
    n->activation = (int)dims[5 + layers];
    const int h = in;
    n->a1 = Linear{h, h, offsets[o], offsets[o + 1]};
    n->a2 = Linear{h, n->actions, offsets[o + 2], offsets[o + 3]};
    if (n->dueling) {
        n->v1 = Linear{h, h, offsets[o + 4], offsets[o + 5]};
        n->v2 = Linear{h, 1, offsets[o + 6], offsets[o + 7]};
    }
    const int64_t b = n->batch;
    for (const Linear& l : n->encoder) {
        n->enc.emplace_back(b * l.out);
        n->scratch.emplace_back(b * l.out);
    }
    for (std::vector<float>* v : {&n->ha, &n->hv, &n->sha, &n->shv, &n->ga, &n->gv}) {
        v->resize(b * h);
    }
    for (std::vector<float>* v : {&n->qa, &n->q, &n->sqa, &n->qnext, &n->qtarget, &n->gqa}) {
        v->resize(b * n->actions);
    }
    for (std::vector<float>* v : {&n->qv, &n->sqv, &n->gqv}) {
        v->resize(b);
    }
    int widest = h;
    for (const Linear& l : n->encoder) {
        widest = l.out > widest ? l.out : widest;
    }
    n->gh.resize(b * widest);
    n->gh2.resize(b * widest);
    // Backward's stages, as dqn_backward_stage runs them: head A, head V (when dueling), the encoder last first.
    int stage = 0;
    finished_by(*n, n->a2, stage++);
    finished_by(*n, n->a1, stage++);
    if (n->dueling) {
        finished_by(*n, n->v2, stage++);
        finished_by(*n, n->v1, stage++);
    }
    for (int l = layers - 1; l >= 0; l--) {
        finished_by(*n, n->encoder[l], stage++);
    }
    n->stages = stage;
    sort_frontier(*n);
    return reinterpret_cast<int64_t>(n);
}

inline void dqn_free(const int64_t handle) {
    delete reinterpret_cast<dqn_detail::Net*>(handle);
}

/**
 * Q-values [rows, actions] of rows observations with the given parameters, into q. Returns 0, or -1 (nothing read or
 * written) when rows is outside [1, the batch size the workspace was sized for].
 */
inline int32_t dqn_q_values(const int64_t handle, const int64_t params_address, const int64_t obs_address,
    const int64_t rows, const int64_t q_address) {
    using namespace dqn_detail;
    Net& n = *reinterpret_cast<Net*>(handle);
    if (rows < 1 || rows > n.batch) {
        return -1;
    }
    forward(n, reinterpret_cast<const float*>(params_address), reinterpret_cast<const float*>(obs_address), (int)rows,
        n.scratch, n.sha, n.shv, n.sqa, n.sqv, reinterpret_cast<float*>(q_address));
    return 0;
}

/**
 * One DQN update's forward and loss, and the gradient at the Q output: the first half of dqn_update, which then runs
 * every stage of backward_stage unless its caller runs them (to send the gradients of the last layers to other
 * ranks while backward goes on: backward_stage returns how far they are final). Arguments and checks as
 * dqn_update's; returns 0, or -1 (nothing written but the error) for an action out of range.
 */
inline int32_t dqn_update_begin(const int64_t handle, const int64_t params_address, const int64_t grads_address,
    const int64_t target_address, const int64_t obs_address, const int64_t next_obs_address,
    const int64_t action_address, const int64_t return_address, const int64_t bootstrap_address,
    const int64_t weight_address, const int32_t huber, const int64_t stats_address, const int64_t td_address,
    const int64_t error_address) {
    using namespace dqn_detail;
    Net& n = *reinterpret_cast<Net*>(handle);
    const float* params = reinterpret_cast<const float*>(params_address);
    float* grads = reinterpret_cast<float*>(grads_address);
    const float* target = reinterpret_cast<const float*>(target_address);
    const float* obs = reinterpret_cast<const float*>(obs_address);
    const float* next_obs = reinterpret_cast<const float*>(next_obs_address);
    const int64_t* action = reinterpret_cast<const int64_t*>(action_address);
    const float* ret = reinterpret_cast<const float*>(return_address);
    const float* bootstrap = reinterpret_cast<const float*>(bootstrap_address);
    const float* weight = reinterpret_cast<const float*>(weight_address);
    Stats& stats = *reinterpret_cast<Stats*>(stats_address);
    float* td_out = reinterpret_cast<float*>(td_address);
    const int b = n.batch;
    const int na = n.actions;
    // q[action] and dq[action] below index by these: a caller's out-of-range action must not reach them.
    for (int i = 0; i < b; i++) {
        if (action[i] < 0 || action[i] >= na) {
            int64_t* error = reinterpret_cast<int64_t*>(error_address);
            error[0] = i;
            error[1] = action[i];
            return -1;
        }
    }

    forward(n, params, obs, b, n.enc, n.ha, n.hv, n.qa, n.qv, n.q.data());
    forward(n, params, next_obs, b, n.scratch, n.sha, n.shv, n.sqa, n.sqv, n.qnext.data());
    forward(n, target, next_obs, b, n.scratch, n.sha, n.shv, n.sqa, n.sqv, n.qtarget.data());

    double loss = 0.0;
    double q_sum = 0.0;
    double target_sum = 0.0;
    const float inv_b = 1.0f / (float)b;
    // dQ: zero but at each sample's action; for a dueling head it becomes dA in place below.
    std::vector<float>& dq = n.gqa;
    for (int i = 0; i < b; i++) {
        const float* qn = n.qnext.data() + (int64_t)i * na;
        int best = 0;
        for (int k = 1; k < na; k++) {
            if (qn[k] > qn[best]) {
                best = k;
            }
        }
        const float* qi = n.q.data() + (int64_t)i * na;
        const float* qt = n.qtarget.data() + (int64_t)i * na;
        for (int k = 0; k < na; k++) {
            q_sum += qi[k];
            target_sum += qt[k];
        }
        const float y = ret[i] + bootstrap[i] * qt[best];
        const float d = qi[action[i]] - y;
        float per_sample;
        float grad;
        if (0 != huber) {
            const float ad = std::fabs(d);
            per_sample = ad <= 1.0f ? 0.5f * d * d : ad - 0.5f;
            grad = ad <= 1.0f ? d : huber_slope(d);
        } else {
            per_sample = d * d;
            grad = 2.0f * d;
        }
        loss += (double)(per_sample * weight[i]);
        td_out[i] = std::fabs(d);
        for (int k = 0; k < na; k++) {
            dq[(int64_t)i * na + k] = 0.0f;
        }
        dq[(int64_t)i * na + action[i]] = grad * weight[i] * inv_b;
    }
    stats.loss = loss / b;
    stats.q = q_sum / ((double)b * na);
    stats.target_q = target_sum / ((double)b * na);

    if (n.dueling) {
        // Q = V + A - mean(A): dV = sum_k dQ, dA = dQ - mean_k dQ.
        for (int i = 0; i < b; i++) {
            float* row = dq.data() + (int64_t)i * na;
            float sum = 0.0f;
            for (int k = 0; k < na; k++) {
                sum += row[k];
            }
            n.gqv[i] = sum;
            const float mean = sum / (float)na;
            for (int k = 0; k < na; k++) {
                row[k] -= mean;
            }
        }
    }
    n.cur_params = params;
    n.cur_grads = grads;
    n.cur_input = obs;
    n.next_stage = 0;
    return 0;
}

/**
 * The backward stage after the last one (stage must be the next in turn: 0 after a *_begin, then 1, ...), over
 * what the *_begin bound. Returns the lowest flat offset from which every gradient is final (the parameter count
 * when none is yet), or -1 with nothing written when stage is not the next in turn (no begin, or out of order).
 */
inline int64_t backward_stage(const int64_t handle, const int32_t stage) {
    using namespace dqn_detail;
    Net& n = *reinterpret_cast<Net*>(handle);
    if (stage != n.next_stage || stage < 0 || stage >= n.stages) {
        return -1;
    }
    n.next_stage = stage + 1 == n.stages ? -1 : stage + 1;
    const float* params = n.cur_params;
    float* grads = n.cur_grads;
    const int b = n.batch;
    if (n.mlp) {
        // Layer L-1-stage; gh holds the gradient at its output.
        const int l = (int)n.encoder.size() - 1 - stage;
        const float* input = 0 == l ? n.cur_input : n.enc[l - 1].data();
        float* dx = 0 == l ? nullptr : n.gh2.data();
        linear_backward(n, n.encoder[l], params, grads, input, n.gh.data(), dx, 0 == l ? nullptr : input, b);
        if (nullptr != dx) {
            n.gh.swap(n.gh2);
        }
        return frontier(n, stage);
    }
    const float* h = n.encoder.empty() ? n.cur_input : n.enc.back().data();
    const int heads = n.dueling ? 4 : 2;
    switch (stage) {
        case 0:
            linear_backward(n, n.a2, params, grads, n.ha.data(), n.gqa.data(), n.ga.data(), n.ha.data(), b);
            break;
        case 1:
            linear_backward(n, n.a1, params, grads, h, n.ga.data(), n.gh.data(), h, b);
            break;
        case 2:
            if (n.dueling) {
                linear_backward(n, n.v2, params, grads, n.hv.data(), n.gqv.data(), n.gv.data(), n.hv.data(), b);
                break;
            }
            [[fallthrough]];
        case 3:
            if (n.dueling) {
                linear_backward(n, n.v1, params, grads, h, n.gv.data(), n.gh2.data(), h, b);
                const int64_t count = (int64_t)b * n.a1.in;
                for (int64_t i = 0; i < count; i++) {
                    n.gh[i] += n.gh2[i];
                }
                break;
            }
            [[fallthrough]];
        default: {
            // The encoder, last layer first; gh holds the gradient at the current layer's output.
            const int l = (int)n.encoder.size() - 1 - (stage - heads);
            const Linear& layer = n.encoder[l];
            const float* x = 0 == l ? n.cur_input : n.enc[l - 1].data();
            float* dx = 0 == l ? nullptr : n.gh2.data();
            linear_backward(n, layer, params, grads, x, n.gh.data(), dx, 0 == l ? nullptr : x, b);
            if (nullptr != dx) {
                n.gh.swap(n.gh2);
            }
        }
    }
    return frontier(n, stage);
}

/** The backward stages of a handle's update: one per layer (dqn: head A's two, head V's two, the encoder's). */
inline int32_t backward_stages(const int64_t handle) {
    return reinterpret_cast<dqn_detail::Net*>(handle)->stages;
}

/**
 * One DQN update's forward and backward: gradients written into grads (overwritten, as after zero_grad); its
 * dqn_detail::Stats (loss, mean Q, mean target-net Q at the next observations) at stats_address, |TD error| per sample
 * into td_address (floats). Double DQN: the online net picks the next action, the target net values it.
 * Every action is checked to lie in [0, actions) before anything is read through it or written: the first that
 * does not is stored as [index, value] into error_address (2 int64) and -1 returned, with nothing else written.
 * Returns 0 otherwise. dqn_update_begin and then, when backward is not 0, every backward_stage; with backward 0 the
 * caller runs the stages.
 */
inline int32_t dqn_update(const int64_t handle, const int64_t params_address, const int64_t grads_address,
    const int64_t target_address, const int64_t obs_address, const int64_t next_obs_address,
    const int64_t action_address, const int64_t return_address, const int64_t bootstrap_address,
    const int64_t weight_address, const int32_t huber, const int64_t stats_address, const int64_t td_address,
    const int64_t error_address, const int32_t backward) {
    const int32_t status = dqn_update_begin(handle, params_address, grads_address, target_address, obs_address,
        next_obs_address, action_address, return_address, bootstrap_address, weight_address, huber, stats_address,
        td_address, error_address);
    for (int32_t stage = 0, stages = backward_stages(handle); 0 == status && 0 != backward && stage < stages;
         stage++) {
        backward_stage(handle, stage);
    }
    return status;
}

/**
 * A supervised MLP step's forward and backward (Linear layers, the activation between them, none after the last;
 * the mean over all outputs of the squared error, as torch::mse_loss, or of Huber's loss with delta 1, as
 * torch::huber_loss, each sample's terms optionally weighted): dims [layers L, width_0 .. width_L, batch, activation,
 * huber (0/1)], offsets weight and bias of each layer. Returns a handle for mlp_step / dqn_free (the same structure
 * holds it), or 0 as dqn_create for sizes or flags it cannot take.
 */
inline int64_t mlp_create(const int64_t sgemm_address, const int64_t dims_address, const int64_t offsets_address) {
    using namespace dqn_detail;
    const int64_t* dims = reinterpret_cast<const int64_t*>(dims_address);
    const int64_t* offsets = reinterpret_cast<const int64_t*>(offsets_address);
    if (dims[0] < 1 || dims[0] > 64 || !sizes_ok(dims + 1, (int)dims[0] + 2) || (RELU != dims[3 + dims[0]]
        && TANH != dims[3 + dims[0]]) || dims[4 + dims[0]] < 0 || dims[4 + dims[0]] > 1) {
        return 0;
    }
    Net* n = new_net(sgemm_address);
    const int layers = (int)dims[0];
    n->batch = (int)dims[2 + layers];
    n->activation = (int)dims[3 + layers];
    n->huber = 0 != dims[4 + layers];
    int widest = 1;
    for (int l = 0; l < layers; l++) {
        const int in = (int)dims[1 + l];
        const int out = (int)dims[2 + l];
        n->encoder.push_back(Linear{in, out, offsets[2 * l], offsets[2 * l + 1]});
        n->enc.emplace_back((int64_t)n->batch * out);
        widest = out > widest ? out : widest;
        widest = in > widest ? in : widest;
    }
    n->gh.resize((int64_t)n->batch * widest);
    n->gh2.resize((int64_t)n->batch * widest);
    n->mlp = true;
    n->stages = layers;
    for (int l = layers - 1; l >= 0; l--) {
        finished_by(*n, n->encoder[l], layers - 1 - l);
    }
    sort_frontier(*n);
    return reinterpret_cast<int64_t>(n);
}

/** One step's forward and loss, and the gradient at the output: the first half of mlp_step (arguments as its). */
inline void mlp_step_begin(const int64_t handle, const int64_t params_address, const int64_t grads_address,
    const int64_t x_address, const int64_t y_address, const int64_t weight_address, const int64_t stats_address) {
    using namespace dqn_detail;
    Net& n = *reinterpret_cast<Net*>(handle);
    const float* params = reinterpret_cast<const float*>(params_address);
    float* grads = reinterpret_cast<float*>(grads_address);
    const float* x = reinterpret_cast<const float*>(x_address);
    const float* y = reinterpret_cast<const float*>(y_address);
    const int b = n.batch;
    const int layers = (int)n.encoder.size();
    const float* in = x;
    for (int l = 0; l < layers; l++) {
        linear(n, n.encoder[l], params, in, n.enc[l].data(), b, l + 1 < layers);
        in = n.enc[l].data();
    }
    const int out = n.encoder.back().out;
    const int64_t count = (int64_t)b * out;
    const float inv_count = 1.0f / (float)count;
    const float* weight = reinterpret_cast<const float*>(weight_address);
    double loss = 0.0;
    const float* prediction = n.enc.back().data();
    for (int i = 0; i < b; i++) {
        const float w = nullptr == weight ? 1.0f : weight[i];
        double row = 0.0;
        for (int j = 0; j < out; j++) {
            const int64_t k = (int64_t)i * out + j;
            const float d = prediction[k] - y[k];
            if (n.huber) {
                const float ad = std::fabs(d);
                row += ad <= 1.0f ? 0.5f * d * d : ad - 0.5f;
                n.gh[k] = w * inv_count * (ad <= 1.0f ? d : huber_slope(d));
            } else {
                row += d * d;
                n.gh[k] = w * inv_count * 2.0f * d;
            }
        }
        loss += (double)w * row;
    }
    reinterpret_cast<dqn_detail::Stats*>(stats_address)->loss = loss / (double)count;
    n.cur_params = params;
    n.cur_grads = grads;
    n.cur_input = x;
    n.next_stage = 0;
}

/**
 * One step's forward and backward: gradients written into grads, the loss into the dqn_detail::Stats at
 * stats_address. weight_address: one float per sample multiplying its terms, or 0 for none. mlp_step_begin and
 * then, when backward is not 0, every backward_stage; with backward 0 the caller runs the stages.
 */
inline void mlp_step(const int64_t handle, const int64_t params_address, const int64_t grads_address,
    const int64_t x_address, const int64_t y_address, const int64_t weight_address, const int64_t stats_address,
    const int32_t backward) {
    mlp_step_begin(handle, params_address, grads_address, x_address, y_address, weight_address, stats_address);
    for (int32_t stage = 0, stages = backward_stages(handle); 0 != backward && stage < stages; stage++) {
        backward_stage(handle, stage);
    }
}

}  // namespace ding4j

#endif
