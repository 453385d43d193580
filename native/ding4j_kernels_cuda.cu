// CUDA variant of ding4j_kernels.h: the same fused Adam/AdamW/SGD steps and gradient norm over flat float32
// device buffers, one thread per element. Built by `cppbuild.sh --cuda` into libding4j_kernels_cuda.so with a
// C ABI (device addresses in, a cudaError_t code out) so that any host (ctypes, JNI) can launch it on the
// caller's stream. The arithmetic mirrors the CPU header line for line; keep the two in step.
#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;

__global__ void sum_squares_kernel(const float* __restrict__ g, const int64_t n, double* __restrict__ out) {
    __shared__ double partial[THREADS];
    double sum = 0.0;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const double v = g[i];
        sum += v * v;
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (0 == threadIdx.x) {
        atomicAdd(out, partial[0]);
    }
}

__global__ void adam_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                            float* __restrict__ v, float* __restrict__ vmax, const int64_t n, const float step_size,
                            const float sqrt_bias_correction2, const float b1, const float b2,
                            const float one_minus_b1, const float one_minus_b2, const float e, const float wd,
                            const float decay, const bool l2, const bool shrink, const bool amsgrad,
                            const float grad_scale) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) {
        return;
    }
    float pi = p[i];
    float gi = g[i] * grad_scale;
    if (shrink) {
        pi = pi * decay;
    }
    if (l2) {
        gi = gi + wd * pi;
    }
    const float mi = m[i] * b1 + one_minus_b1 * gi;
    const float vi = v[i] * b2 + one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float second = vi;
    if (amsgrad) {
        second = fmaxf(vmax[i], vi);
        vmax[i] = second;
    }
    const float denom = sqrtf(second) / sqrt_bias_correction2 + e;
    p[i] = pi - step_size * (mi / denom);
}

__global__ void sgd_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ buf,
                           const int64_t n, const float neg_lr, const float mu, const float one_minus_dampening,
                           const float wd, const bool has_momentum, const bool nesterov, const bool first,
                           const float grad_scale) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float pi = p[i];
    float d = g[i] * grad_scale;
    if (0.0f != wd) {
        d = d + wd * pi;
    }
    if (has_momentum) {
        const float b = first ? d : buf[i] * mu + one_minus_dampening * d;
        buf[i] = b;
        d = nesterov ? d + mu * b : b;
    }
    p[i] = pi + neg_lr * d;
}

unsigned int blocks_for(const int64_t n) {
    return static_cast<unsigned int>((n + THREADS - 1) / THREADS);
}

}  // namespace

extern "C" {

/** Writes the sum of squares of n device floats into the host double *result (synchronous on stream). */
int ding4j_cuda_sum_squares(const int64_t grad, const int64_t n, double* const result, const int64_t stream) {
    const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    double* device_sum = nullptr;
    cudaError_t status = cudaMallocAsync(reinterpret_cast<void**>(&device_sum), sizeof(double), s);
    if (cudaSuccess != status) {
        return status;
    }
    cudaMemsetAsync(device_sum, 0, sizeof(double), s);
    const unsigned int blocks = blocks_for(n) < 1024 ? blocks_for(n) : 1024;
    sum_squares_kernel<<<blocks > 0 ? blocks : 1, THREADS, 0, s>>>(reinterpret_cast<const float*>(grad), n,
                                                                   device_sum);
    cudaMemcpyAsync(result, device_sum, sizeof(double), cudaMemcpyDeviceToHost, s);
    cudaFreeAsync(device_sum, s);
    status = cudaStreamSynchronize(s);
    return cudaSuccess != status ? status : cudaGetLastError();
}

int ding4j_cuda_adam_step(const int64_t param, const int64_t grad, const int64_t exp_avg, const int64_t exp_avg_sq,
                          const int64_t max_exp_avg_sq, const int64_t n, const double lr, const double beta1,
                          const double beta2, const double eps, const double weight_decay, const int64_t step,
                          const int amsgrad, const int decoupled, const float grad_scale, const int64_t stream) {
    const double bias_correction1 = 1.0 - pow(beta1, static_cast<double>(step));
    const double bias_correction2 = 1.0 - pow(beta2, static_cast<double>(step));
    adam_kernel<<<blocks_for(n), THREADS, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<float*>(param), reinterpret_cast<const float*>(grad), reinterpret_cast<float*>(exp_avg),
        reinterpret_cast<float*>(exp_avg_sq), reinterpret_cast<float*>(max_exp_avg_sq), n,
        static_cast<float>(lr / bias_correction1), static_cast<float>(sqrt(bias_correction2)),
        static_cast<float>(beta1), static_cast<float>(beta2), static_cast<float>(1.0 - beta1),
        static_cast<float>(1.0 - beta2), static_cast<float>(eps), static_cast<float>(weight_decay),
        static_cast<float>(1.0 - lr * weight_decay), 0 == decoupled && 0.0 != weight_decay,
        0 != decoupled && 0.0 != weight_decay, 0 != amsgrad, grad_scale);
    return cudaGetLastError();
}

int ding4j_cuda_sgd_step(const int64_t param, const int64_t grad, const int64_t momentum_buffer, const int64_t n,
                         const double lr, const double momentum, const double dampening, const double weight_decay,
                         const int nesterov, const int first, const float grad_scale, const int64_t stream) {
    sgd_kernel<<<blocks_for(n), THREADS, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<float*>(param), reinterpret_cast<const float*>(grad),
        reinterpret_cast<float*>(momentum_buffer), n, static_cast<float>(-1.0 * lr), static_cast<float>(momentum),
        static_cast<float>(1.0 - dampening), static_cast<float>(weight_decay), 0.0 != momentum, 0 != nesterov,
        0 != first, grad_scale);
    return cudaGetLastError();
}

}
