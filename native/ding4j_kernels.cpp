// C ABI of the CPU kernels, built by cppbuild.sh into libding4j_kernels.so for callers outside the JVM
// (ctypes cross-checks against torch.optim, C programs). The JVM links the same header through JavaCPP.
#include "ding4j_kernels.h"

extern "C" {

double ding4j_sum_squares(const int64_t grad, const int64_t n) {
    return ding4j::sum_squares(grad, n);
}

void ding4j_adam_step(const int64_t param, const int64_t grad, const int64_t exp_avg, const int64_t exp_avg_sq,
                      const int64_t max_exp_avg_sq, const int64_t n, const double lr, const double beta1,
                      const double beta2, const double eps, const double weight_decay, const int64_t step,
                      const int amsgrad, const int decoupled, const float grad_scale) {
    ding4j::adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, n, lr, beta1, beta2, eps, weight_decay,
                      step, amsgrad, decoupled, grad_scale);
}

void ding4j_sgd_step(const int64_t param, const int64_t grad, const int64_t momentum_buffer, const int64_t n,
                     const double lr, const double momentum, const double dampening, const double weight_decay,
                     const int nesterov, const int first, const float grad_scale) {
    ding4j::sgd_step(param, grad, momentum_buffer, n, lr, momentum, dampening, weight_decay, nesterov, first,
                     grad_scale);
}

}
