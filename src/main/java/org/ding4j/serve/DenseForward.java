package org.ding4j.serve;

/**
 * A dense layer's forward in Java over a flat weight vector in PyTorch's {@code Linear} layout (weight
 * {@code [out, in]} row-major, then bias {@code [out]}), for serving small nets without a native call or an
 * allocation: {@code y[r, o] = act(b[o] + sum_i W[o, i] x[r, i])}. Four outputs are accumulated at once, so that the
 * four sums' additions overlap instead of waiting on one another. Stateless; any thread.
 */
public final class DenseForward
{
    /** No activation. */
    public static final int IDENTITY = 0;
    /** {@code max(0, v)}. */
    public static final int RELU = 1;
    /** {@code tanh(v)}. */
    public static final int TANH = 2;

    private DenseForward()
    {
    }

    /**
     * @param p    the flat weights
     * @param w    where the layer's weight starts in {@code p}
     * @param b    where its bias starts
     * @param in   inputs per row
     * @param out  outputs per row
     * @param x    the input rows, {@code [rows, in]}
     * @param y    receives the output rows, {@code [rows, out]}
     * @param rows rows
     * @param act  {@link #IDENTITY}, {@link #RELU} or {@link #TANH}
     */
    public static void layer(final float[] p, final int w, final int b, final int in, final int out, final float[] x,
        final float[] y, final int rows, final int act)
    {
        for (int r = 0; r < rows; r++)
        {
            final int xr = r * in;
            final int yr = r * out;
            int o = 0;
            for (; o + 4 <= out; o += 4)
            {
                final int w0 = w + o * in;
                final int w1 = w0 + in;
                final int w2 = w1 + in;
                final int w3 = w2 + in;
                float s0 = p[b + o];
                float s1 = p[b + o + 1];
                float s2 = p[b + o + 2];
                float s3 = p[b + o + 3];
                for (int i = 0; i < in; i++)
                {
                    final float xi = x[xr + i];
                    s0 += p[w0 + i] * xi;
                    s1 += p[w1 + i] * xi;
                    s2 += p[w2 + i] * xi;
                    s3 += p[w3 + i] * xi;
                }
                y[yr + o] = activate(s0, act);
                y[yr + o + 1] = activate(s1, act);
                y[yr + o + 2] = activate(s2, act);
                y[yr + o + 3] = activate(s3, act);
            }
            for (; o < out; o++)
            {
                final int wo = w + o * in;
                float s = p[b + o];
                for (int i = 0; i < in; i++)
                {
                    s += p[wo + i] * x[xr + i];
                }
                y[yr + o] = activate(s, act);
            }
        }
    }

    private static float activate(final float v, final int act)
    {
        switch (act)
        {
            case RELU:
                return v > 0 ? v : 0f;
            case TANH:
                return (float)Math.tanh(v);
            default:
                return v;
        }
    }
}
