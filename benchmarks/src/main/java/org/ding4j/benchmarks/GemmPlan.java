package org.ding4j.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.openblas.global.openblas_nolapack;

/**
 * The matrix products of a fused update alone, at the update's shapes: the {@code gemm} rows of the update
 * benchmarks, the floor for this BLAS on one core. Built layer by layer as {@code native/ding4j_layers.h} runs them
 * (a forward is {@code Y = X W^T}; a backward is the weight gradient {@code dY^T X} and, but for the first layer
 * unless asked, the input gradient {@code dY W}), then run on random operands large enough for every product.
 */
final class GemmPlan implements AutoCloseable
{
    private static final int ROW_MAJOR = 101;
    private static final int NO_TRANS = 111;
    private static final int TRANS = 112;

    /** Each product as {transA, transB, M, N, K}. */
    private final List<int[]> products = new ArrayList<>();
    private int[][] plan = new int[0][];
    private FloatPointer x;
    private FloatPointer w;
    private FloatPointer y;

    /**
     * Adds a forward.
     *
     * @param rows   the batch
     * @param layers each layer's {in, out}
     * @return this
     */
    GemmPlan forward(final int rows, final int[][] layers)
    {
        for (final int[] l : layers)
        {
            products.add(new int[] {NO_TRANS, TRANS, rows, l[1], l[0]});
        }
        return this;
    }

    /**
     * Adds a backward, last layer first.
     *
     * @param rows     the batch
     * @param layers   each layer's {in, out}
     * @param weights  whether the weight gradients are computed
     * @param inputToo whether the first layer's input gradient is computed too
     * @return this
     */
    GemmPlan backward(final int rows, final int[][] layers, final boolean weights, final boolean inputToo)
    {
        for (int i = layers.length - 1; i >= 0; i--)
        {
            final int[] l = layers[i];
            if (weights)
            {
                products.add(new int[] {TRANS, NO_TRANS, l[1], l[0], rows});
            }
            if (0 != i || inputToo)
            {
                products.add(new int[] {NO_TRANS, NO_TRANS, rows, l[0], l[1]});
            }
        }
        return this;
    }

    /** @return 2 M N K summed over the plan */
    double flops()
    {
        double sum = 0;
        for (final int[] g : products)
        {
            sum += 2.0 * g[2] * g[3] * g[4];
        }
        return sum;
    }

    /**
     * Draws the operands, each {@code floats} long (at least the largest of any product's A, B and C).
     *
     * @param floats each operand's length
     * @return this
     */
    GemmPlan allocate(final long floats)
    {
        plan = products.toArray(new int[0][]);
        final SplittableRandom random = new SplittableRandom(2);
        x = new FloatPointer(floats);
        w = new FloatPointer(floats);
        y = new FloatPointer(floats);
        for (final FloatPointer p : new FloatPointer[] {x, w, y})
        {
            for (long i = 0; i < floats; i++)
            {
                p.put(i, (float)random.nextGaussian());
            }
        }
        return this;
    }

    /** Runs every product once. */
    void run()
    {
        for (final int[] g : plan)
        {
            final int lda = NO_TRANS == g[0] ? g[4] : g[2];
            final int ldb = NO_TRANS == g[1] ? g[3] : g[4];
            openblas_nolapack.cblas_sgemm(ROW_MAJOR, g[0], g[1], g[2], g[3], g[4], 1f, x, lda, w, ldb, 0f, y, g[3]);
        }
    }

    @Override
    public void close()
    {
        for (final FloatPointer p : new FloatPointer[] {x, w, y})
        {
            if (null != p)
            {
                p.close();
            }
        }
    }
}
