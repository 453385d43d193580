package org.ding4j.torch;

import org.bytedeco.pytorch.Tensor;

/**
 * The native kernels on caller-supplied tensors, each argument checked before the call: defined, CPU, float32,
 * contiguous, one length for every buffer, finite hyper-parameters. A bad argument is an
 * {@link IllegalArgumentException} naming it, never a native crash.
 * <p>
 * Each call looks up {@code data_ptr()} addresses (a few JavaCPP objects); {@link FusedAdam} and {@link FusedSgd}
 * look them up once and are the allocation-free way to step every iteration.
 */
public final class FusedKernels
{
    private FusedKernels()
    {
    }

    /**
     * One in-place Adam/AdamW step, as {@code torch::optim::Adam}/{@code AdamW} does it for one parameter.
     *
     * @param param       updated in place
     * @param grad        the gradient
     * @param expAvg      first moment, updated in place
     * @param expAvgSq    second moment, updated in place
     * @param maxExpAvgSq running maximum of the second moment when {@code config.amsgrad()}, else ignored (may be null)
     * @param config      hyper-parameters
     * @param step        the step number after this step (1 on the first call)
     * @param gradScale   gradient multiplier in (0, 1], as gradient clipping computes it
     * @throws IllegalArgumentException if a buffer or value is bad
     */
    public static void adamStep(
        final Tensor param, final Tensor grad, final Tensor expAvg, final Tensor expAvgSq, final Tensor maxExpAvgSq,
        final AdamConfig config, final long step, final float gradScale)
    {
        final long n = Checks.cpuFloatBuffer("param", param, -1);
        Checks.cpuFloatBuffer("grad", grad, n);
        Checks.cpuFloatBuffer("exp_avg", expAvg, n);
        Checks.cpuFloatBuffer("exp_avg_sq", expAvgSq, n);
        long maxAddress = 0L;
        if (config.amsgrad())
        {
            Checks.cpuFloatBuffer("max_exp_avg_sq", maxExpAvgSq, n);
            maxAddress = maxExpAvgSq.data_ptr().address();
        }
        checkStep(step);
        checkGradScale(gradScale);
        NativeKernels.adam_step(
            param.data_ptr().address(), grad.data_ptr().address(), expAvg.data_ptr().address(),
            expAvgSq.data_ptr().address(), maxAddress, n, config.lr(), config.beta1(), config.beta2(), config.eps(),
            config.weightDecay(), step, config.amsgrad() ? 1 : 0, config.decoupled() ? 1 : 0, gradScale);
    }

    /**
     * One in-place SGD step, as {@code torch::optim::SGD} does it for one parameter.
     *
     * @param param          updated in place
     * @param grad           the gradient
     * @param momentumBuffer updated in place when {@code config.momentum() > 0}, else ignored (may be null)
     * @param config         hyper-parameters
     * @param first          true on the first step (the buffer is then set to the gradient, as libtorch does)
     * @param gradScale      gradient multiplier in (0, 1]
     * @throws IllegalArgumentException if a buffer or value is bad
     */
    public static void sgdStep(
        final Tensor param, final Tensor grad, final Tensor momentumBuffer, final SgdConfig config,
        final boolean first, final float gradScale)
    {
        final long n = Checks.cpuFloatBuffer("param", param, -1);
        Checks.cpuFloatBuffer("grad", grad, n);
        long momentumAddress = 0L;
        if (config.momentum() > 0.0)
        {
            Checks.cpuFloatBuffer("momentum_buffer", momentumBuffer, n);
            momentumAddress = momentumBuffer.data_ptr().address();
        }
        checkGradScale(gradScale);
        NativeKernels.sgd_step(
            param.data_ptr().address(), grad.data_ptr().address(), momentumAddress, n, config.lr(),
            config.momentum(), config.dampening(), config.weightDecay(), config.nesterov() ? 1 : 0, first ? 1 : 0,
            gradScale);
    }

    /**
     * Sum of squares of a buffer, accumulated in double.
     *
     * @param buffer a contiguous CPU float32 tensor
     * @return the sum of its squared elements
     * @throws IllegalArgumentException if the buffer is bad
     */
    public static double sumSquares(final Tensor buffer)
    {
        final long n = Checks.cpuFloatBuffer("buffer", buffer, -1);
        return NativeKernels.sum_squares(buffer.data_ptr().address(), n);
    }

    static void checkStep(final long step)
    {
        if (step < 1)
        {
            throw new IllegalArgumentException("step: expected a step count >= 1, got " + step);
        }
    }

    static void checkGradScale(final float gradScale)
    {
        if (!(gradScale > 0.0f && gradScale <= 1.0f))
        {
            throw new IllegalArgumentException("grad_scale: expected a number in (0, 1], got " + gradScale);
        }
    }
}
