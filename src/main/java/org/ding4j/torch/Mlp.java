package org.ding4j.torch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.bytedeco.pytorch.LinearImpl;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.Tensor;

/**
 * A multi-layer perceptron as a libtorch module: {@code Linear, ReLU, ..., Linear} (or Tanh between the layers,
 * {@link Activation}), laid out and named like
 * PyTorch's {@code nn.Sequential} of the same layers ({@code 0.weight}, {@code 0.bias}, {@code 2.weight}, ...),
 * so its state dict lines up with a Python model's. Initialised by libtorch's {@code Linear} defaults from the
 * global generator: {@code torch.manual_seed(s)} before construction makes it reproducible.
 * <p>
 * Not thread-safe. {@link #close()} frees the module.
 */
public final class Mlp implements AutoCloseable
{
    private final Owned<Module> module;
    private final LinearImpl[] layers;
    private final long[] sizes;
    private final Activation activation;

    private Mlp(final Activation activation, final long[] sizes)
    {
        final Module root = new Module("Mlp");
        this.layers = new LinearImpl[sizes.length - 1];
        for (int i = 0; i < layers.length; i++)
        {
            // The registered module holds the shared_ptr; this array keeps the Java peers for forward().
            layers[i] = root.register_module(Integer.toString(2 * i), new LinearImpl(sizes[i], sizes[i + 1]));
        }
        this.module = Owned.own("Mlp" + Arrays.toString(sizes), root);
        this.sizes = sizes;
        this.activation = activation;
    }

    /**
     * Builds an MLP.
     *
     * @param sizes input width, hidden widths, output width (at least two)
     * @return the module owner
     * @throws IllegalArgumentException if fewer than two sizes are given or one is not positive
     */
    public static Mlp of(final long... sizes)
    {
        return of(Activation.RELU, sizes);
    }

    /**
     * Builds an MLP with the given activation between its layers.
     *
     * @param activation ReLU or Tanh
     * @param sizes      input width, hidden widths, output width (at least two)
     * @return the module owner
     * @throws IllegalArgumentException if fewer than two sizes are given or one is not positive
     */
    public static Mlp of(final Activation activation, final long... sizes)
    {
        Objects.requireNonNull(activation, "activation");
        Objects.requireNonNull(sizes, "sizes");
        if (sizes.length < 2)
        {
            throw new IllegalArgumentException("sizes: expected input and output widths at least, got "
                + Arrays.toString(sizes));
        }
        for (final long size : sizes)
        {
            if (size < 1)
            {
                throw new IllegalArgumentException("sizes: expected positive widths, got " + Arrays.toString(sizes));
            }
        }
        return new Mlp(activation, sizes.clone());
    }

    /**
     * Runs the layers; the returned tensor belongs to the caller's {@link org.bytedeco.javacpp.PointerScope}.
     *
     * @param input a batch, shape [batch, sizes[0]]
     * @return the output, shape [batch, sizes[last]]
     */
    public Tensor forward(final Tensor input)
    {
        module.get();
        Tensor x = input;
        final LinearImpl[] layers = this.layers;
        for (int i = 0; i < layers.length; i++)
        {
            x = layers[i].forward(x);
            if (i < layers.length - 1)
            {
                x = activation.apply(x);
            }
        }
        return x;
    }

    /** @return the libtorch module (owned here; do not close) */
    public Module module()
    {
        return module.get();
    }

    /** @return the activation between the layers */
    public Activation activation()
    {
        return activation;
    }

    /** @return a copy of the layer widths */
    public long[] sizes()
    {
        return sizes.clone();
    }

    /** @return the parameter count */
    public long parameterCount()
    {
        long count = 0;
        for (int i = 0; i + 1 < sizes.length; i++)
        {
            count += sizes[i] * sizes[i + 1] + sizes[i + 1];
        }
        return count;
    }

    /** @return the state-dict names of the parameters, in {@code named_parameters()} order */
    public List<String> parameterNames()
    {
        final List<String> names = new ArrayList<>();
        for (int i = 0; i < layers.length; i++)
        {
            names.add(2 * i + ".weight");
            names.add(2 * i + ".bias");
        }
        return names;
    }

    /** Frees the module. */
    @Override
    public void close()
    {
        module.close();
    }
}
