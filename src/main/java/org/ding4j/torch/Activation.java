package org.ding4j.torch;

import java.util.Locale;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * The activation between the Linear layers of an MLP-family network ({@link Mlp}, DQN's Q-network):
 * what {@code nn.ReLU} and {@code nn.Tanh} are in a PyTorch model. The fused native paths support these two; the
 * ordinal is the code {@code native/ding4j_dqn.h} reads, so the order is fixed.
 */
public enum Activation
{
    /** {@code max(x, 0)}; PyTorch's and DI-engine's default. */
    RELU,
    /** {@code tanh(x)}. */
    TANH;

    /** The config spellings, as messages name them. */
    public static final String CHOICES = "relu or tanh";

    /**
     * Applies the activation through libtorch (the autograd path).
     *
     * @param x the input
     * @return a new tensor, in the caller's scope
     */
    public Tensor apply(final Tensor x)
    {
        return RELU == this ? torch.relu(x) : torch.tanh(x);
    }

    /**
     * Reads a config value: {@code relu} or {@code tanh}.
     *
     * @param key   the config key, for the error
     * @param value the value
     * @return the activation
     * @throws IllegalArgumentException naming the key, the value and the choices
     */
    public static Activation parse(final String key, final String value)
    {
        final Activation a = spelled(value);
        if (null == a)
        {
            throw new IllegalArgumentException(key + ": expected " + CHOICES + ", got '" + value + "'");
        }
        return a;
    }

    /**
     * @param value a config value
     * @return the activation spelled so ({@code relu}, {@code tanh}), or null
     */
    public static Activation spelled(final String value)
    {
        for (final Activation a : values())
        {
            if (a.toString().equals(value))
            {
                return a;
            }
        }
        return null;
    }

    /** @return the config spelling, {@code relu} or {@code tanh} */
    @Override
    public String toString()
    {
        return name().toLowerCase(Locale.ROOT);
    }
}
