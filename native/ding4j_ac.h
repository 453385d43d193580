// ding4j fused actor-critic updates: a whole TD3 or SAC update (target actions, twin target Q, the TD target, the
// twin critic loss and backward, the critics' Adam step, the actor's reparameterised sample, Q of the sampled action,
// backward through the critics into the actor without touching the critics' gradients, the actor's Adam step, SAC's
// temperature step, Polyak averaging of the targets) in one native call over the flat parameter, gradient and Adam
// state buffers that libtorch's modules and ding4j's FusedAdam view. Matrix products go to the cblas_sgemm of the
// OpenBLAS the presets load, layers through ding4j_layers.h's linear / linear_backward; the workspace is sized once.
// Every operation follows the libtorch autograd path of org.ding4j.rl.ac (Td3Policy, SacPolicy) in the same
// order, so that results equal it within float rounding; FusedActorCriticTest compares them.
//
// Java (org.ding4j.torch.FusedActorCritic) checks every tensor's shape, dtype and device before it passes an address:
// the kernel indexes only within the sizes ac_create was given.
#ifndef DING4J_AC_H
#define DING4J_AC_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ding4j_helper.h"
#include "ding4j_mlp.h"

namespace ding4j {

namespace ac_detail {

using layer::Linear;
using layer::Ops;

enum { TD3 = 0, SAC = 1 };
/**
 * One update's buffers and constants, by name: Java's FusedActorCritic sets each field through JavaCPP's accessors
 * (NativeKernels.AcArgs), so no index is mirrored by hand. Addresses are data_ptr()s of contiguous CPU float32
 * tensors, checked by the caller.
 */
struct Args {
    // The nets' flat buffers: online, gradients, targets (TD3's actor target; SAC has none).
    int64_t actor = 0;
    int64_t actor_grad = 0;
    int64_t actor_target = 0;
    int64_t critic = 0;
    int64_t critic_grad = 0;
    int64_t critic_target = 0;
    // The batch: obs, action, reward, next_obs, not_done; the noise (TD3's smoothing, SAC's draws for s' and s).
    int64_t obs = 0;
    int64_t action = 0;
    int64_t reward = 0;
    int64_t next_obs = 0;
    int64_t not_done = 0;
    int64_t noise = 0;
    int64_t noise2 = 0;
    // Adam's moments.
    int64_t actor_exp_avg = 0;
    int64_t actor_exp_avg_sq = 0;
    int64_t critic_exp_avg = 0;
    int64_t critic_exp_avg_sq = 0;
    // SAC's temperature: log alpha, its gradient and moments.
    int64_t log_alpha = 0;
    int64_t log_alpha_grad = 0;
    int64_t alpha_exp_avg = 0;
    int64_t alpha_exp_avg_sq = 0;
    double gamma = 0.99;
    double tau = 0.005;
    AdamArgs actor_adam;
    AdamArgs critic_adam;
    AdamArgs alpha_adam;
    bool actor_turn = true;   // TD3: whether this update steps the actor and the targets
    bool auto_alpha = false;  // SAC: whether the temperature is learned
    double target_entropy = 0.0;
};

/** What an update leaves for the log (FusedActorCritic's accessors name the same). */
struct Stats {
    double critic_loss = 0.0;
    double q = 0.0;
    double target_q = 0.0;
    double actor_loss = 0.0;
    double alpha_loss = 0.0;
    double alpha = 0.0;
    double log_prob = 0.0;
};
// ac_update's stages: ALL runs the whole update; a data-parallel caller runs the other three in order and averages
// the gradients across ranks between them (the critics' after CRITIC_GRADS, the actor's and alpha's after
// ACTOR_GRADS), so that every Adam step takes the averaged gradients. ALL is the three back to back.
enum { STAGE_ALL = 0, STAGE_CRITIC_GRADS = 1, STAGE_ACTOR_GRADS = 2, STAGE_STEPS = 3 };

const float LOG_SIGMA_MIN = -20.0f;
const float LOG_SIGMA_MAX = 2.0f;
const float TANH_EPS = 1e-6f;
const double HALF_LOG_2PI = 0.91893853320467274178;

using mlp_model::Mlp;

struct AC {
    Ops ops;  // sgemm and the activation (ReLU) for the layer functions
    int kind;
    int batch;
    int obs;
    int act;
    int in;  // obs + act: the critics' input width
    Mlp actor;
    Mlp q[2];
    std::vector<float> x;        // [B, in]: (obs, action) rows, the critics' input
    std::vector<float> y;        // [B] TD target
    std::vector<float> qv[2];    // [B] critic outputs saved apart (the Mlp buffers are reused)
    // Each critic's own: they may run on two threads at once.
    std::vector<float> dq[2];    // [B] dL/dQ
    std::vector<float> dx[2];    // [B, in] dL/dinput of a critic
    std::vector<float> dx_sum;   // [B, in] summed over both critics (SAC)
    std::vector<float> gh[2], gh2[2];  // [B, widest] gradients between layers
    Helper* helper = nullptr;    // the second thread for the twin critics, or none
    ~AC() { delete helper; }
    std::vector<float> a;        // [B, act] the sampled or deterministic action
    std::vector<float> log_sigma;  // [B, act] clamped log sigma (SAC)
    std::vector<float> log_prob;   // [B] log pi (SAC)
    std::vector<float> dout;       // [B, actor out] dL/dactor output
};

/** A forward of the batch (ReLU between the layers); returns the last layer's output (inside m.out). */
inline const float* forward(const AC& c, Mlp& m, const float* params, const float* x, const int rows) {
    return mlp_model::forward(c.ops, m, params, x, rows);
}

/** mlp_model::backward through the gradient scratch of slot k (0 or 1: what one thread of the two uses). */
inline void backward(AC& c, Mlp& m, const float* params, float* grads, const float* input, const float* dy,
    float* dx_in, const int rows, const int k = 0) {
    mlp_model::backward(c.ops, m, params, grads, input, dy, dx_in, rows, c.gh[k].data(), c.gh2[k].data());
}

inline void adam(const AdamArgs& s, const int64_t param, const int64_t grad, const int64_t m, const int64_t v,
    const int64_t n) {
    adam_step(s, param, grad, m, v, n, 0, 1.0f);
}

/** target = target + tau (online - target): libtorch's lerp_ for a weight below 0.5 (tau is checked <= 1). */
inline void polyak(const int64_t target_address, const int64_t online_address, const int64_t n, const double tau) {
    float* t = reinterpret_cast<float*>(target_address);
    const float* p = reinterpret_cast<const float*>(online_address);
    const float w = (float)tau;
    if (w < 0.5f) {
        for (int64_t i = 0; i < n; i++) {
            t[i] = t[i] + w * (p[i] - t[i]);
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            t[i] = p[i] - (p[i] - t[i]) * (1.0f - w);
        }
    }
}

/** Rows of (obs, action) into c.x. */
inline void critic_input(AC& c, const float* obs, const float* action) {
    for (int i = 0; i < c.batch; i++) {
        float* row = c.x.data() + (int64_t)i * c.in;
        for (int k = 0; k < c.obs; k++) {
            row[k] = obs[(int64_t)i * c.obs + k];
        }
        for (int k = 0; k < c.act; k++) {
            row[c.obs + k] = action[(int64_t)i * c.act + k];
        }
    }
}

/**
 * y = reward + gamma * notDone * next, where next = min(Q1_target, Q2_target)(c.x) - alpha * log_prob (log_prob
 * null: no entropy term). Returns the mean of next.
 */
inline double td_target(AC& c, const float* critic_target, const float* reward, const float* not_done,
    const float gamma, const float alpha, const float* log_prob) {
    both(c.helper, [&](const int k) {
        const float* q = forward(c, c.q[k], critic_target, c.x.data(), c.batch);
        std::copy(q, q + c.batch, c.qv[k].begin());
    });
    double sum = 0.0;
    for (int i = 0; i < c.batch; i++) {
        float next = c.qv[0][i] < c.qv[1][i] ? c.qv[0][i] : c.qv[1][i];
        if (nullptr != log_prob) {
            next = next - alpha * log_prob[i];
        }
        sum += next;
        c.y[i] = reward[i] + gamma * (not_done[i] * next);
    }
    return sum / c.batch;
}

/** The number of floats of the critics' flat buffer (both nets): past the last layer's bias. */
inline int64_t critic_numel(const AC& c) {
    int64_t end = 0;
    for (const Mlp& m : c.q) {
        for (const Linear& l : m.layers) {
            end = std::max(end, std::max(l.w + (int64_t)l.out * l.in, l.b + (int64_t)l.out));
        }
    }
    return end;
}

inline int64_t actor_numel(const AC& c) {
    int64_t end = 0;
    for (const Linear& l : c.actor.layers) {
        end = std::max(end, std::max(l.w + (int64_t)l.out * l.in, l.b + (int64_t)l.out));
    }
    return end;
}

/**
 * The twin critic's gradients on (obs, action) rows already in c.x: mse(Q1, y) + mse(Q2, y), its gradients into the
 * critics' buffer (each layer's written once: nothing to zero). Writes the loss and mean Q1 to stats.
 */
inline void critic_grads(AC& c, const Args& args, Stats& stats) {
    const float* params = reinterpret_cast<const float*>(args.critic);
    float* grads = reinterpret_cast<float*>(args.critic_grad);
    const float inv_b = 1.0f / (float)c.batch;
    double sq[2] = {0.0, 0.0};
    both(c.helper, [&](const int k) {
        const float* q = forward(c, c.q[k], params, c.x.data(), c.batch);
        double sum = 0.0;
        for (int i = 0; i < c.batch; i++) {
            const float d = q[i] - c.y[i];
            sum += (double)d * d;
            // d mean((q - y)^2) / dq = 2 (q - y) / B, libtorch's mse_loss backward.
            c.dq[k][i] = 2.0f * d * inv_b;
        }
        std::copy(q, q + c.batch, c.qv[k].begin());
        sq[k] = sum;
        backward(c, c.q[k], params, grads, c.x.data(), c.dq[k].data(), nullptr, c.batch, k);
    });
    double q_sum = 0.0;
    for (int i = 0; i < c.batch; i++) {
        q_sum += c.qv[0][i];
    }
    // In the order one thread sums them: the same bits with one thread or two.
    double loss = 0.0;
    loss += sq[0] / c.batch;
    loss += sq[1] / c.batch;
    stats.critic_loss = loss;
    stats.q = q_sum / c.batch;
}

/**
 * SAC's squashed Gaussian on the actor output rows: a = tanh(mu + exp(clamp(log_sigma)) * eps) into c.a, the clamped
 * log sigma into c.log_sigma, log pi into c.log_prob (the Gaussian's less the tanh correction, as SacPolicy).
 */
inline void squash(AC& c, const float* out, const float* eps) {
    const int w = 2 * c.act;
    for (int i = 0; i < c.batch; i++) {
        float gaussian = 0.0f;
        float correction = 0.0f;
        for (int k = 0; k < c.act; k++) {
            const int64_t j = (int64_t)i * c.act + k;
            const float mu = out[(int64_t)i * w + k];
            const float raw = out[(int64_t)i * w + c.act + k];
            const float ls = raw < LOG_SIGMA_MIN ? LOG_SIGMA_MIN : (raw > LOG_SIGMA_MAX ? LOG_SIGMA_MAX : raw);
            const float e = eps[j];
            const float a = std::tanh(mu + std::exp(ls) * e);
            c.a[j] = a;
            c.log_sigma[j] = ls;
            gaussian += ((e * e) * -0.5f - ls) - (float)HALF_LOG_2PI;
            correction += std::log(((-(a * a)) + 1.0f) + TANH_EPS);
        }
        c.log_prob[i] = gaussian - correction;
    }
}

inline void td3(AC& c, const Args& args, Stats& stats, const int stage) {
    const float* obs = reinterpret_cast<const float*>(args.obs);
    const float* next_obs = reinterpret_cast<const float*>(args.next_obs);
    const float* noise = reinterpret_cast<const float*>(args.noise);
    const int64_t n_act = (int64_t)c.batch * c.act;
    const bool actor_turn = args.actor_turn;
    if (STAGE_ALL == stage || STAGE_CRITIC_GRADS == stage) {
        // a' = clamp(tanh(actor_target(s')) + noise, -1, 1)
        const float* out = forward(c, c.actor, reinterpret_cast<const float*>(args.actor_target), next_obs, c.batch);
        for (int64_t j = 0; j < n_act; j++) {
            const float v = std::tanh(out[j]) + noise[j];
            c.a[j] = v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
        }
        critic_input(c, next_obs, c.a.data());
        stats.target_q = td_target(c, reinterpret_cast<const float*>(args.critic_target),
            reinterpret_cast<const float*>(args.reward), reinterpret_cast<const float*>(args.not_done),
            (float)args.gamma, 0.0f, nullptr);
        critic_input(c, obs, reinterpret_cast<const float*>(args.action));
        critic_grads(c, args, stats);
    }
    if (STAGE_ALL == stage || STAGE_ACTOR_GRADS == stage) {
        adam(args.critic_adam, args.critic, args.critic_grad, args.critic_exp_avg, args.critic_exp_avg_sq,
            critic_numel(c));
        if (actor_turn) {
            // actor loss = -mean(Q1(s, tanh(actor(s)))), through the updated critic into the actor only.
            const float* actor = reinterpret_cast<const float*>(args.actor);
            const float* critic = reinterpret_cast<const float*>(args.critic);
            const float* out = forward(c, c.actor, actor, obs, c.batch);
            for (int64_t j = 0; j < n_act; j++) {
                c.a[j] = std::tanh(out[j]);
            }
            critic_input(c, obs, c.a.data());
            const float* q = forward(c, c.q[0], critic, c.x.data(), c.batch);
            double q_sum = 0.0;
            const float dq = -1.0f / (float)c.batch;
            for (int i = 0; i < c.batch; i++) {
                q_sum += q[i];
                c.dq[0][i] = dq;
            }
            stats.actor_loss = -q_sum / c.batch;
            backward(c, c.q[0], critic, nullptr, c.x.data(), c.dq[0].data(), c.dx[0].data(), c.batch);
            for (int i = 0; i < c.batch; i++) {
                for (int k = 0; k < c.act; k++) {
                    const int64_t j = (int64_t)i * c.act + k;
                    c.dout[j] = c.dx[0][(int64_t)i * c.in + c.obs + k] * (1.0f - c.a[j] * c.a[j]);
                }
            }
            backward(c, c.actor, actor, reinterpret_cast<float*>(args.actor_grad), obs, c.dout.data(), nullptr,
                c.batch);
        }
    }
    if ((STAGE_ALL == stage || STAGE_STEPS == stage) && actor_turn) {
        adam(args.actor_adam, args.actor, args.actor_grad, args.actor_exp_avg, args.actor_exp_avg_sq, actor_numel(c));
        polyak(args.actor_target, args.actor, actor_numel(c), args.tau);
        polyak(args.critic_target, args.critic, critic_numel(c), args.tau);
    }
}

/**
 * SAC's policy gradient into the actor's buffer and (auto alpha) the temperature's gradient, through the updated
 * critics (their gradients untouched): policy loss = mean(alpha log pi(a~|s) - min(Q1, Q2)(s, a~)).
 */
inline void sac_actor_grads(AC& c, const Args& args, Stats& stats, const float alpha) {
    const float* obs = reinterpret_cast<const float*>(args.obs);
    const float* eps = reinterpret_cast<const float*>(args.noise2);
    const float* actor = reinterpret_cast<const float*>(args.actor);
    const float* critic = reinterpret_cast<const float*>(args.critic);
    // policy loss = mean(alpha log pi(a~|s) - min(Q1, Q2)(s, a~)), a~ = tanh(mu + sigma eps)
    const float* out = forward(c, c.actor, actor, obs, c.batch);
    squash(c, out, eps);
    critic_input(c, obs, c.a.data());
    both(c.helper, [&](const int k) {
        const float* q = forward(c, c.q[k], critic, c.x.data(), c.batch);
        std::copy(q, q + c.batch, c.qv[k].begin());
    });
    const float inv_b = 1.0f / (float)c.batch;
    double loss = 0.0;
    double log_prob_sum = 0.0;
    for (int i = 0; i < c.batch; i++) {
        const float m = c.qv[0][i] < c.qv[1][i] ? c.qv[0][i] : c.qv[1][i];
        loss += c.log_prob[i] * alpha - m;
        log_prob_sum += c.log_prob[i];
    }
    stats.actor_loss = loss / c.batch;
    stats.log_prob = log_prob_sum / c.batch;
    // d/dQ of -min(Q1, Q2) / B goes to the smaller (split in half on a tie, as libtorch's minimum backward).
    both(c.helper, [&](const int k) {
        for (int i = 0; i < c.batch; i++) {
            const float mine = c.qv[k][i];
            const float theirs = c.qv[1 - k][i];
            c.dq[k][i] = mine < theirs ? -inv_b : (mine == theirs ? -0.5f * inv_b : 0.0f);
        }
        backward(c, c.q[k], critic, nullptr, c.x.data(), c.dq[k].data(), c.dx[k].data(), c.batch, k);
    });
    for (int64_t j = 0; j < (int64_t)c.batch * c.in; j++) {
        c.dx_sum[j] = c.dx[0][j] + c.dx[1][j];
    }
    const float dlog_prob = alpha * inv_b;
    const int w = 2 * c.act;
    for (int i = 0; i < c.batch; i++) {
        for (int k = 0; k < c.act; k++) {
            const int64_t j = (int64_t)i * c.act + k;
            const float a = c.a[j];
            const float ls = c.log_sigma[j];
            const float raw = out[(int64_t)i * w + c.act + k];
            // log pi = sum(-eps^2/2 - ls - c) - sum log(1 - a^2 + 1e-6): d/da of the second is 2a / (1 - a^2 + 1e-6).
            const float da = c.dx_sum[(int64_t)i * c.in + c.obs + k]
                + dlog_prob * (-(-2.0f * a / (((-(a * a)) + 1.0f) + TANH_EPS)));
            const float du = da * (1.0f - a * a);
            c.dout[(int64_t)i * w + k] = du;
            // u = mu + exp(ls) eps: d/dls = du eps exp(ls); the Gaussian term adds -dlog_prob; clamp passes inside.
            const float dls = du * eps[j] * std::exp(ls) - dlog_prob;
            c.dout[(int64_t)i * w + c.act + k] = raw >= LOG_SIGMA_MIN && raw <= LOG_SIGMA_MAX ? dls : 0.0f;
        }
    }
    backward(c, c.actor, actor, reinterpret_cast<float*>(args.actor_grad), obs, c.dout.data(), nullptr, c.batch);
    if (args.auto_alpha) {
        // alpha loss = -mean(log_alpha (log pi + target entropy)); its gradient -mean(log pi + target entropy).
        const float* log_alpha = reinterpret_cast<const float*>(args.log_alpha);
        const float te = (float)args.target_entropy;
        double g = 0.0;
        for (int i = 0; i < c.batch; i++) {
            g += c.log_prob[i] + te;
        }
        stats.alpha_loss = -(double)log_alpha[0] * g / c.batch;
        reinterpret_cast<float*>(args.log_alpha_grad)[0] = (float)(-g / c.batch);
    } else {
        stats.alpha_loss = 0.0;
    }
}

inline void sac(AC& c, const Args& args, Stats& stats, const int stage) {
    const float* obs = reinterpret_cast<const float*>(args.obs);
    const float* next_obs = reinterpret_cast<const float*>(args.next_obs);
    const float* eps_next = reinterpret_cast<const float*>(args.noise);
    const float* actor = reinterpret_cast<const float*>(args.actor);
    const float* log_alpha = reinterpret_cast<const float*>(args.log_alpha);
    // log alpha changes only in the last stage: every stage before it reads the same temperature.
    const float alpha = (float)std::exp((double)log_alpha[0]);
    if (STAGE_ALL == stage || STAGE_CRITIC_GRADS == stage) {
        stats.alpha = alpha;
        // y = r + gamma notDone (min Q_target(s', a') - alpha log pi(a'|s')), a' ~ pi(s')
        squash(c, forward(c, c.actor, actor, next_obs, c.batch), eps_next);
        critic_input(c, next_obs, c.a.data());
        stats.target_q = td_target(c, reinterpret_cast<const float*>(args.critic_target),
            reinterpret_cast<const float*>(args.reward), reinterpret_cast<const float*>(args.not_done),
            (float)args.gamma, alpha, c.log_prob.data());
        critic_input(c, obs, reinterpret_cast<const float*>(args.action));
        critic_grads(c, args, stats);
    }
    if (STAGE_ALL == stage || STAGE_ACTOR_GRADS == stage) {
        adam(args.critic_adam, args.critic, args.critic_grad, args.critic_exp_avg, args.critic_exp_avg_sq,
            critic_numel(c));
        sac_actor_grads(c, args, stats, alpha);
    }
    if (STAGE_ALL == stage || STAGE_STEPS == stage) {
        adam(args.actor_adam, args.actor, args.actor_grad, args.actor_exp_avg, args.actor_exp_avg_sq, actor_numel(c));
        if (args.auto_alpha) {
            adam(args.alpha_adam, args.log_alpha, args.log_alpha_grad, args.alpha_exp_avg, args.alpha_exp_avg_sq, 1);
        }
        polyak(args.critic_target, args.critic, critic_numel(c), args.tau);
    }
}

}  // namespace ac_detail

/**
 * Builds a fused actor-critic update. dims: [kind (0 TD3, 1 SAC), batch, obs, act, actor layers La, critic layers
 * Lc, actor widths (La + 1: obs ... actor output), critic widths (Lc + 1: obs + act ... 1)]; offsets (floats into the
 * flat buffers): weight and bias of each actor layer, then of each layer of Q1, then of Q2 (both in the critics'
 * buffer). Returns a handle for ac_update / ac_free, or 0 (nothing allocated) when a size is outside [1, 2^24], a
 * layer count outside [1, 64], the widths do not chain (the actor from obs to act, or 2 act for SAC; the critics from
 * obs + act to 1) or the kind is unknown.
 */
inline int64_t ac_create(const int64_t sgemm_address, const int64_t dims_address, const int64_t offsets_address) {
    using namespace ac_detail;
    const int64_t* dims = reinterpret_cast<const int64_t*>(dims_address);
    const int64_t* offsets = reinterpret_cast<const int64_t*>(offsets_address);
    const int64_t kind = dims[0];
    const int64_t la = dims[4];
    const int64_t lc = dims[5];
    if ((TD3 != kind && SAC != kind) || !mlp_model::actor_critic_sizes_ok(dims)) {
        return 0;
    }
    const int64_t* aw = dims + 6;
    const int64_t* cw = aw + la + 1;
    if (aw[0] != dims[2] || aw[la] != (SAC == kind ? 2 : 1) * dims[3] || cw[0] != dims[2] + dims[3] || cw[lc] != 1) {
        return 0;
    }
    AC* c = new AC();
    c->ops.sgemm = reinterpret_cast<layer::sgemm_t>(sgemm_address);
    c->ops.activation = layer::RELU;
    c->kind = (int)kind;
    c->batch = (int)dims[1];
    c->obs = (int)dims[2];
    c->act = (int)dims[3];
    c->in = c->obs + c->act;
    const int64_t b = c->batch;
    int widest = std::max(c->actor.add(aw, (int)la, offsets, b), c->q[0].add(cw, (int)lc, offsets + 2 * la, b));
    c->q[1].add(cw, (int)lc, offsets + 2 * (la + lc), b);
    c->x.resize(b * c->in);
    c->dx_sum.resize(b * c->in);
    for (int k = 0; k < 2; k++) {
        c->dx[k].resize(b * c->in);
        c->dq[k].resize(b);
        c->gh[k].resize(b * widest);
        c->gh2[k].resize(b * widest);
    }
    for (std::vector<float>* v : {&c->y, &c->qv[0], &c->qv[1], &c->log_prob}) {
        v->resize(b);
    }
    c->a.resize(b * c->act);
    c->log_sigma.resize(b * c->act);
    c->dout.resize(b * aw[la]);
    return reinterpret_cast<int64_t>(c);
}

inline void ac_free(const int64_t handle) {
    delete reinterpret_cast<ac_detail::AC*>(handle);
}

/** Runs the twin critics' halves on two threads (a helper of the update's own) when threads is 2, else on one. */
inline void ac_threads(const int64_t handle, const int threads) {
    set_threads(reinterpret_cast<ac_detail::AC*>(handle)->helper, threads);
}

/**
 * One whole update over the buffers and constants args names; its statistics into stats. stage: STAGE_ALL, or one of
 * the three stages a data-parallel caller runs in order (args the same for all three), outside [0, 3] nothing.
 */
inline void ac_update(const int64_t handle, const ac_detail::Args* args, ac_detail::Stats* stats, const int stage) {
    using namespace ac_detail;
    AC& c = *reinterpret_cast<AC*>(handle);
    if (TD3 == c.kind) {
        td3(c, *args, *stats, stage);
    } else {
        sac(c, *args, *stats, stage);
    }
}

}  // namespace ding4j

#endif  // DING4J_AC_H
