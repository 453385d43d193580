// ding4j fused PPO update: every minibatch of a rollout's epochs in one native call. Per minibatch: its rows gathered
// by the caller's shuffled order, advantages normalised, actor and critic forwards (Tanh MLPs), the clipped surrogate,
// the (optionally clipped) value loss and the entropy bonus, their backward into the flat gradient buffer, the global
// gradient-norm clip and one Adam step; each minibatch's losses and statistics written to its own row of stats, which
// the caller hands to the learner as one iteration each. Layers and the MLP forward/backward are ding4j_layers.h's and
// ding4j_mlp.h's (as TD3's and SAC's); every matrix product is the presets' OpenBLAS cblas_sgemm.
// The arithmetic follows org.ding4j.rl.ppo.PpoPolicy's libtorch autograd path operation by operation, including
// autograd's conventions at the edges (maximum's gradient split in half on a tie, clamp's gradient passed at its
// bounds), so that gradients equal it within float rounding; FusedPpoTest compares them.
//
// Java (org.ding4j.torch.FusedPpo) checks every tensor's shape, dtype and device, the order's range and each stored
// discrete action before it passes an address.
#ifndef DING4J_PPO_H
#define DING4J_PPO_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ding4j_helper.h"
#include "ding4j_mlp.h"

namespace ding4j {

namespace ppo_detail {

using layer::Ops;
using mlp_model::Mlp;

/**
 * One training call's buffers and constants, by name: Java's FusedPpo sets each field through JavaCPP's accessors
 * (NativeKernels.PpoArgs), so no index is mirrored by hand. Addresses are data_ptr()s of contiguous CPU float32
 * tensors (order: int32), checked by the caller.
 */
struct Args {
    // The flat buffers: parameters (actor, critic, log_std), their gradients, Adam's two moments.
    int64_t params = 0;
    int64_t grads = 0;
    int64_t exp_avg = 0;
    int64_t exp_avg_sq = 0;
    // The rollout: obs [N, obs], action [N, 1 or act], log_prob, value, advantage, ret [N]; the minibatch order.
    int64_t obs = 0;
    int64_t action = 0;
    int64_t log_prob = 0;
    int64_t value = 0;
    int64_t advantage = 0;
    int64_t ret = 0;
    int64_t order = 0;
    // The loss.
    double clip_ratio = 0.2;
    bool value_clip = false;
    double value_weight = 0.5;
    double entropy_weight = 0.0;
    bool adv_norm = true;
    // The optimizer: torch.nn.utils.clip_grad_norm_'s limit (0: none), then Adam's settings; adam.step is the first
    // minibatch's step, minibatch j's is adam.step + j.
    double max_grad_norm = 0.0;
    AdamArgs adam;
};

/** What one minibatch leaves for the learner's log (FusedPpo.Stat names the same). */
struct Stats {
    double policy_loss = 0.0;
    double value_loss = 0.0;
    double entropy = 0.0;
    double approx_kl = 0.0;
    double clip_fraction = 0.0;
    double grad_norm = 0.0;
    double total_loss = 0.0;
};

// ppo_update's stages: ALL runs each minibatch of the range whole; a data-parallel caller runs GRADS and STEP for
// one minibatch at a time and averages the gradients across ranks between them.
enum { STAGE_ALL = 0, STAGE_GRADS = 1, STAGE_STEP = 2 };

const float HALF_LOG_2PI = 0.918938533204672742f;
/** clip_grad_norm_'s constant added to the norm before dividing (FusedOptimizer.CLIP_EPS). */
const double CLIP_EPS = 1e-6;

struct PPO {
    Ops ops;  // sgemm; Tanh between layers
    bool discrete;
    int batch;  // rows per minibatch
    int obs;
    int act;    // action count (categorical) or width (Gaussian)
    int action_width;  // floats per stored action: 1 or act
    int64_t numel;     // every parameter: actor, critic, log std
    int64_t log_std;   // offset of the log standard deviations, or -1
    Mlp actor;
    Mlp critic;
    std::vector<float> x, a, old_logp, old_v, ret, adv;  // the minibatch's rows
    std::vector<float> dout;  // [B, act] dL/dactor output
    std::vector<float> dv;    // [B] dL/dvalue
    std::vector<float> gh[2], gh2[2];  // the actor's (0) and the critic's (1): they may run on two threads at once
    Helper* helper = nullptr;          // the second thread for the critic's half, or none
    ~PPO() { delete helper; }
    std::vector<float> z;     // [B, act] Gaussian: (a - mu) / sigma
    std::vector<float> sigma; // [act] Gaussian: exp(log_std), once per minibatch
    std::vector<float> probs; // [act] categorical: one row's softmax
};

/** Copies the minibatch's rows (order[0..B)) out of the rollout. */
inline void gather(PPO& p, const Args& a, const int32_t* order) {
    const float* obs = reinterpret_cast<const float*>(a.obs);
    const float* action = reinterpret_cast<const float*>(a.action);
    const float* logp = reinterpret_cast<const float*>(a.log_prob);
    const float* value = reinterpret_cast<const float*>(a.value);
    const float* adv = reinterpret_cast<const float*>(a.advantage);
    const float* ret = reinterpret_cast<const float*>(a.ret);
    for (int i = 0; i < p.batch; i++) {
        const int64_t r = order[i];
        std::memcpy(p.x.data() + (int64_t)i * p.obs, obs + r * p.obs, sizeof(float) * p.obs);
        std::memcpy(p.a.data() + (int64_t)i * p.action_width, action + r * p.action_width,
            sizeof(float) * p.action_width);
        p.old_logp[i] = logp[r];
        p.old_v[i] = value[r];
        p.adv[i] = adv[r];
        p.ret[i] = ret[r];
    }
}

/** adv = (adv - mean) / (std + 1e-8), std unbiased, as PpoPolicy's adv.sub(adv.mean()).div(adv.std() + 1e-8). */
inline void normalise(PPO& p) {
    double sum = 0.0;
    for (int i = 0; i < p.batch; i++) {
        sum += p.adv[i];
    }
    const float mean = (float)(sum / p.batch);
    double squares = 0.0;
    for (int i = 0; i < p.batch; i++) {
        const double d = (double)p.adv[i] - mean;
        squares += d * d;
    }
    const float denom = (float)std::sqrt(squares / (p.batch - 1)) + 1e-8f;
    for (int i = 0; i < p.batch; i++) {
        p.adv[i] = (p.adv[i] - mean) / denom;
    }
}

/**
 * The weights torch.maximum(a, b)'s backward gives each side, as derivatives.yaml writes it: where(a == b, g / 2, g),
 * then zero for the side that is smaller. So a half each on a tie, 1 and 0 otherwise, and 1 to both when either is
 * NaN (no compare holds).
 */
inline void max_split(const float a, const float b, float& to_a, float& to_b) {
    to_a = a == b ? 0.5f : (a < b ? 0.0f : 1.0f);
    to_b = a == b ? 0.5f : (b < a ? 0.0f : 1.0f);
}

/**
 * Forward, losses and backward of the gathered minibatch into the gradient buffer; its statistics into stats (the
 * grad norm NaN until the step). Every stored discrete action is an index in [0, act): the caller checked.
 */
inline void gradients(PPO& p, const Args& s, Stats& stats) {
    const float* params = reinterpret_cast<const float*>(s.params);
    float* grads = reinterpret_cast<float*>(s.grads);
    const int B = p.batch;
    const int A = p.act;
    stats.grad_norm = std::nan("");
    if (s.adv_norm) {
        normalise(p);
    }
    // The actor's forward (0) and the critic's (1) are independent: two threads when there is a helper.
    both(p.helper, [&](const int k) {
        mlp_model::forward(p.ops, 0 == k ? p.actor : p.critic, params, p.x.data(), B);
    });
    const float* out = p.actor.out.back().data();
    const float* v = p.critic.out.back().data();
    const float eps = (float)s.clip_ratio;
    const float lo = (float)(1.0 - s.clip_ratio);
    const float hi = (float)(1.0 + s.clip_ratio);
    const float vw = (float)s.value_weight;
    const float ew = (float)s.entropy_weight;
    const float inv_b = 1.0f / (float)B;
    const float* log_std = p.discrete ? nullptr : params + p.log_std;
    double pg = 0.0, vl = 0.0, ent = 0.0, kl = 0.0, clipped = 0.0;
    if (!p.discrete) {
        // The entropy bonus's gradient at log_std (-ew; the rows add theirs below), and each sigma once.
        for (int k = 0; k < A; k++) {
            ent += (double)(log_std[k] + (0.5f + HALF_LOG_2PI));
            grads[p.log_std + k] = -ew;
            p.sigma[k] = std::exp(log_std[k]);
        }
    }
    for (int i = 0; i < B; i++) {
        const float* o = out + (int64_t)i * A;
        float* d = p.dout.data() + (int64_t)i * A;
        float logp;
        float lse = 0.0f;
        float entropy = 0.0f;
        if (p.discrete) {
            float max = o[0];
            for (int k = 1; k < A; k++) {
                max = o[k] > max ? o[k] : max;
            }
            float sum = 0.0f;
            for (int k = 0; k < A; k++) {
                sum += std::exp(o[k] - max);
            }
            lse = max + std::log(sum);
            for (int k = 0; k < A; k++) {
                const float l = o[k] - lse;
                p.probs[k] = std::exp(l);
                entropy -= p.probs[k] * l;
            }
            logp = o[(int)p.a[i]] - lse;
            ent += entropy;
        } else {
            logp = 0.0f;
            for (int k = 0; k < A; k++) {
                const float zk = (p.a[(int64_t)i * A + k] - o[k]) / p.sigma[k];
                p.z[(int64_t)i * A + k] = zk;
                logp += (zk * zk * -0.5f - log_std[k]) - HALF_LOG_2PI;
            }
        }
        const float log_ratio = logp - p.old_logp[i];
        const float r = std::exp(log_ratio);
        const float rc = r < lo ? lo : (r > hi ? hi : r);
        const float t1 = -p.adv[i] * r;
        const float t2 = -p.adv[i] * rc;
        pg += t1 > t2 ? t1 : t2;
        float to1, to2;
        max_split(t1, t2, to1, to2);
        // d pg / d logp: through the ratio (d r / d logp = r), the clamp passing inside [lo, hi] inclusive.
        const float g = -p.adv[i] * (to1 + to2 * (r >= lo && r <= hi ? 1.0f : 0.0f)) * r * inv_b;
        kl += (double)((r - 1.0f) - log_ratio);
        clipped += std::fabs(r - 1.0f) > eps ? 1.0 : 0.0;
        if (p.discrete) {
            // log_softmax's backward of the chosen log-prob, plus the entropy bonus's -ew/B dH/dout.
            const int chosen = (int)p.a[i];
            for (int k = 0; k < A; k++) {
                const float pk = p.probs[k];
                d[k] = g * ((k == chosen ? 1.0f : 0.0f) - pk) + ew * inv_b * pk * ((o[k] - lse) + entropy);
            }
        } else {
            for (int k = 0; k < A; k++) {
                d[k] = g * p.z[(int64_t)i * A + k] / p.sigma[k];
            }
        }
        // Value loss: 0.5 mean of (v - ret)^2, or of the larger of it and the clipped value's.
        const float diff = v[i] - p.ret[i];
        const float plain = diff * diff;
        float dvl = 2.0f * diff;
        float loss_i = plain;
        if (s.value_clip) {
            const float moved = v[i] - p.old_v[i];
            const float near = p.old_v[i] + (moved < -eps ? -eps : (moved > eps ? eps : moved));
            const float far = (near - p.ret[i]) * (near - p.ret[i]);
            float to_plain, to_far;
            max_split(plain, far, to_plain, to_far);
            loss_i = plain > far ? plain : far;
            dvl = to_plain * 2.0f * diff
                + to_far * 2.0f * (near - p.ret[i]) * (moved >= -eps && moved <= eps ? 1.0f : 0.0f);
        }
        vl += loss_i;
        p.dv[i] = vw * 0.5f * inv_b * dvl;
        if (!p.discrete) {
            for (int k = 0; k < A; k++) {
                const float zk = p.z[(int64_t)i * A + k];
                grads[p.log_std + k] += g * (zk * zk - 1.0f);
            }
        }
    }
    both(p.helper, [&](const int k) {
        mlp_model::backward(p.ops, 0 == k ? p.actor : p.critic, params, grads, p.x.data(),
            0 == k ? p.dout.data() : p.dv.data(), nullptr, B, p.gh[k].data(), p.gh2[k].data());
    });
    const double policy_loss = pg / B;
    const double value_loss = 0.5 * vl / B;
    const double entropy = p.discrete ? ent / B : ent;
    stats.policy_loss = policy_loss;
    stats.value_loss = value_loss;
    stats.entropy = entropy;
    stats.approx_kl = kl / B;
    stats.clip_fraction = clipped / B;
    stats.total_loss = policy_loss + s.value_weight * value_loss - s.entropy_weight * entropy;
}

/** The clip and Adam step of minibatch j (FusedOptimizer.step()'s arithmetic); its grad norm into stats. */
inline void step(PPO& p, const Args& s, Stats& stats, const int64_t j) {
    const double max_norm = s.max_grad_norm;
    float scale = 1.0f;
    double norm = std::sqrt(sum_squares(s.grads, p.numel));
    if (max_norm > 0.0) {
        const double coef = max_norm / (norm + CLIP_EPS);
        if (!(coef >= 1.0)) {
            scale = (float)coef;
        }
    }
    stats.grad_norm = norm;
    adam_step(s.adam, s.params, s.grads, s.exp_avg, s.exp_avg_sq, p.numel, j, scale);
}

}  // namespace ppo_detail

/**
 * Builds a fused PPO update. dims: [discrete (0/1), minibatch rows, obs, act, actor layers La, critic layers Lc,
 * actor widths (La + 1: obs ... act), critic widths (Lc + 1: obs ... 1)]; offsets (floats into the one flat buffer):
 * weight and bias of each actor layer, then of each critic layer, then the log standard deviations (-1 for a
 * categorical head), then the buffer's element count. Returns a handle for ppo_update / ppo_free, or 0 (nothing
 * allocated) when a size is outside [1, 2^24], a layer count outside [1, 64], the widths do not chain, or a
 * Gaussian head has no log standard deviations. Advantage normalisation needs minibatches of 2 rows or more (the
 * caller checks).
 */
inline int64_t ppo_create(const int64_t sgemm_address, const int64_t dims_address, const int64_t offsets_address) {
    using namespace ppo_detail;
    const int64_t* dims = reinterpret_cast<const int64_t*>(dims_address);
    const int64_t* offsets = reinterpret_cast<const int64_t*>(offsets_address);
    const int64_t la = dims[4];
    const int64_t lc = dims[5];
    if ((0 != dims[0] && 1 != dims[0]) || !mlp_model::actor_critic_sizes_ok(dims)) {
        return 0;
    }
    const int64_t* aw = dims + 6;
    const int64_t* cw = aw + la + 1;
    const int64_t log_std = offsets[2 * (la + lc)];
    if (aw[0] != dims[2] || aw[la] != dims[3] || cw[0] != dims[2] || cw[lc] != 1 || (0 == dims[0] && log_std < 0)) {
        return 0;
    }
    PPO* p = new PPO();
    p->ops.sgemm = reinterpret_cast<layer::sgemm_t>(sgemm_address);
    p->ops.activation = layer::TANH;
    p->discrete = 1 == dims[0];
    p->batch = (int)dims[1];
    p->obs = (int)dims[2];
    p->act = (int)dims[3];
    p->action_width = p->discrete ? 1 : p->act;
    p->log_std = p->discrete ? -1 : log_std;
    p->numel = offsets[2 * (la + lc) + 1];
    const int64_t b = p->batch;
    const int widest = std::max(p->actor.add(aw, (int)la, offsets, b), p->critic.add(cw, (int)lc, offsets + 2 * la,
        b));
    p->x.resize(b * p->obs);
    p->a.resize(b * p->action_width);
    for (std::vector<float>* v : {&p->old_logp, &p->old_v, &p->ret, &p->adv, &p->dv}) {
        v->resize(b);
    }
    p->dout.resize(b * p->act);
    p->z.resize(b * p->act);
    p->sigma.resize(p->act);
    p->probs.resize(p->act);
    for (int k = 0; k < 2; k++) {
        p->gh[k].resize(b * widest);
        p->gh2[k].resize(b * widest);
    }
    return reinterpret_cast<int64_t>(p);
}

/** Runs the actor's and the critic's forward and backward on two threads (a helper of the update's own) when threads
 * is 2, else on one. */
inline void ppo_threads(const int64_t handle, const int threads) {
    set_threads(reinterpret_cast<ppo_detail::PPO*>(handle)->helper, threads);
}

inline void ppo_free(const int64_t handle) {
    delete reinterpret_cast<ppo_detail::PPO*>(handle);
}

/**
 * Minibatches first .. last - 1 of a rollout: minibatch j takes the rows order[j B .. (j + 1) B) of the rollout
 * tensors args names, steps Adam with step count adam.step + j, and writes its statistics to stats[j]. stage:
 * STAGE_ALL; or STAGE_GRADS then STAGE_STEP of one minibatch, the gradients averaged across ranks between them.
 */
inline void ppo_update(const int64_t handle, const ppo_detail::Args* args, ppo_detail::Stats* stats,
    const int64_t first, const int64_t last, const int stage) {
    using namespace ppo_detail;
    PPO& p = *reinterpret_cast<PPO*>(handle);
    const int32_t* order = reinterpret_cast<const int32_t*>(args->order);
    for (int64_t j = first; j < last; j++) {
        if (STAGE_ALL == stage || STAGE_GRADS == stage) {
            gather(p, *args, order + j * p.batch);
            gradients(p, *args, stats[j]);
        }
        if (STAGE_ALL == stage || STAGE_STEP == stage) {
            step(p, *args, stats[j], j);
        }
    }
}

/**
 * GAE(lambda) over a rollout laid out step-major ([steps][envs]): delta = r + gamma V(next) - V, where V(next) is 0
 * after a terminal step, the final observation's value (trunc) after a truncated one, the next step's value otherwise
 * (last[env] after the rollout's last step); A = delta + gamma lambda A(next), cut where an episode ended; return =
 * A + V. flags: bit 0 the step ended its episode, bit 1 in a terminal state. Sums in double, as the Java it replaced.
 */
inline void ppo_gae(const int steps, const int envs, const float* rewards, const float* values,
    const signed char* flags, const float* trunc, const float* last, const double gamma, const double lambda,
    float* advantages, float* returns) {
    for (int i = 0; i < envs; i++) {
        double next = 0.0;
        for (int t = steps - 1; t >= 0; t--) {
            const int64_t k = (int64_t)t * envs + i;
            const bool ended = 0 != (flags[k] & 1);
            const bool terminal = 0 != (flags[k] & 2);
            const double next_value = ended ? (terminal ? 0.0 : (double)trunc[k])
                : (t == steps - 1 ? (double)last[i] : (double)values[k + envs]);
            const double delta = (double)rewards[k] + gamma * next_value - (double)values[k];
            next = delta + gamma * lambda * (ended ? 0.0 : next);
            advantages[k] = (float)next;
            returns[k] = (float)(next + (double)values[k]);
        }
    }
}

}  // namespace ding4j

#endif  // DING4J_PPO_H
