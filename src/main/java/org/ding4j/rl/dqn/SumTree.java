package org.ding4j.rl.dqn;

/**
 * A complete binary tree over {@code capacity} leaves keeping, at every node, the sum and the minimum of the leaf
 * values beneath it: O(log n) updates, O(log n) prefix-sum search, O(1) total and minimum. Leaves start at 0 (and
 * count as +infinity for the minimum until set). Not thread-safe.
 */
final class SumTree
{
    private final int leaves;
    private final double[] sum;
    private final double[] min;

    SumTree(final int capacity)
    {
        int n = 1;
        while (n < capacity)
        {
            n <<= 1;
        }
        leaves = n;
        sum = new double[2 * n];
        min = new double[2 * n];
        java.util.Arrays.fill(min, Double.POSITIVE_INFINITY);
    }

    void set(final int index, final double value)
    {
        int node = index + leaves;
        sum[node] = value;
        min[node] = value;
        for (node >>= 1; node >= 1; node >>= 1)
        {
            sum[node] = sum[2 * node] + sum[2 * node + 1];
            min[node] = Math.min(min[2 * node], min[2 * node + 1]);
        }
    }

    double get(final int index)
    {
        return sum[index + leaves];
    }

    double total()
    {
        return sum[1];
    }

    double min()
    {
        return min[1];
    }

    /**
     * @param mass a value in {@code [0, total())}
     * @return the leaf whose cumulative range holds it: leaf {@code i} is chosen with probability value_i / total
     */
    int find(final double mass)
    {
        double rest = mass;
        int node = 1;
        while (node < leaves)
        {
            final int left = 2 * node;
            if (rest < sum[left] || 0 == sum[left + 1])
            {
                node = left;
            }
            else
            {
                rest -= sum[left];
                node = left + 1;
            }
        }
        return node - leaves;
    }
}
