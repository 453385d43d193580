package org.ding4j.rl.dqn;

import java.util.Arrays;
import java.util.Objects;

import org.bytedeco.pytorch.LinearImpl;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarTypeOptional;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.torch.Activation;
import org.ding4j.torch.NativeOwner;

/**
 * DI-engine's DQN model as a libtorch module: an {@code FCEncoder} ({@code Linear} + activation per hidden width;
 * ReLU, DI-engine's default, or Tanh) and a
 * plain or dueling head, with DI-engine's parameter names ({@code encoder.main.0.weight}, ...,
 * {@code head.A.0.0.weight}, {@code head.A.1.weight}, {@code head.V.0.0.weight}, {@code head.V.1.weight} for the
 * dueling head, {@code head.Q.0.0.weight} / {@code head.Q.1.weight} for the plain one). The dueling head computes
 * {@code Q = V + A - mean(A)}; each branch is {@code Linear(h, h)} + activation then a linear output, as DI-engine's
 * {@code DuelingHead(layer_num=1)}. Initialised by libtorch's {@code Linear} defaults from the global generator.
 * <p>
 * Not thread-safe. The network owns its module and every Java peer of it; {@link #close()} frees them.
 */
public final class QNetwork implements AutoCloseable
{
    /** Never closed: owns the class's constants, so that a scope open when the class loads cannot free them. */
    private static final NativeOwner CONSTANTS = new NativeOwner("QNetwork constants");
    private static final Scalar ONE = CONSTANTS.own(new Scalar(1.0));
    private static final long[] ACTION_DIM = {1};
    private static final ScalarTypeOptional SAME_TYPE = CONSTANTS.own(new ScalarTypeOptional());

    private final NativeOwner natives;
    private final Module module;
    private final LinearImpl[] encoder;
    private final LinearImpl firstA;
    private final LinearImpl outA;
    private final LinearImpl firstV;
    private final LinearImpl outV;
    private final boolean dueling;
    private final Activation activation;
    private final long[] hidden;

    /**
     * @param obs     observation width
     * @param actions number of discrete actions
     * @param hidden  the encoder's hidden widths, e.g. {@code [128, 128, 64]}
     * @param dueling whether the head is dueling
     * @throws IllegalArgumentException if a width is not positive or no hidden width is given
     */
    public QNetwork(final long obs, final long actions, final long[] hidden, final boolean dueling)
    {
        this(obs, actions, hidden, dueling, Activation.RELU);
    }

    /**
     * @param obs        observation width
     * @param actions    number of discrete actions
     * @param hidden     the encoder's hidden widths, e.g. {@code [128, 128, 64]}
     * @param dueling    whether the head is dueling
     * @param activation the activation after each hidden Linear layer
     * @throws IllegalArgumentException if a width is not positive or no hidden width is given
     */
    public QNetwork(final long obs, final long actions, final long[] hidden, final boolean dueling,
        final Activation activation)
    {
        Objects.requireNonNull(hidden, "hidden");
        this.activation = Objects.requireNonNull(activation, "activation");
        if (obs < 1 || actions < 1 || hidden.length < 1 || Arrays.stream(hidden).anyMatch(h -> h < 1))
        {
            throw new IllegalArgumentException("QNetwork: expected positive widths and at least one hidden layer, got"
                + " obs=" + obs + " actions=" + actions + " hidden=" + Arrays.toString(hidden));
        }
        this.hidden = hidden.clone();
        this.dueling = dueling;
        // Every Java peer the forward pass uses is owned here (each holds its own shared_ptr to the module): a
        // caller's PointerScope open during construction must not free any of them.
        natives = new NativeOwner("QNetwork" + Arrays.toString(hidden));
        final NativeOwner own = natives;
        module = own.own(new Module("QNetwork"));
        final Module main = own.own(own.own(module.register_module("encoder", new Module("encoder")))
            .register_module("main", new Module("main")));
        encoder = new LinearImpl[hidden.length];
        long in = obs;
        for (int i = 0; i < hidden.length; i++)
        {
            encoder[i] = own.own(main.register_module(Integer.toString(2 * i), new LinearImpl(in, hidden[i])));
            in = hidden[i];
        }
        final long h = in;
        final Module head = own.own(module.register_module("head", new Module("head")));
        final Module a = own.own(head.register_module(dueling ? "A" : "Q", new Module("A")));
        firstA = own.own(own.own(a.register_module("0", new Module("0"))).register_module("0", new LinearImpl(h, h)));
        outA = own.own(a.register_module("1", new LinearImpl(h, actions)));
        if (dueling)
        {
            final Module v = own.own(head.register_module("V", new Module("V")));
            firstV = own.own(own.own(v.register_module("0", new Module("0"))).register_module("0",
                new LinearImpl(h, h)));
            outV = own.own(v.register_module("1", new LinearImpl(h, 1)));
        }
        else
        {
            firstV = null;
            outV = null;
        }
    }

    /**
     * Q-values; the result belongs to the caller's {@link org.bytedeco.javacpp.PointerScope}.
     *
     * @param obs [batch, obs]
     * @return [batch, actions]
     */
    public Tensor forward(final Tensor obs)
    {
        if (natives.isClosed())
        {
            throw new IllegalStateException(this + " is closed");
        }
        Tensor x = obs;
        final LinearImpl[] encoder = this.encoder;
        for (int i = 0; i < encoder.length; i++)
        {
            x = activation.apply(encoder[i].forward(x));
        }
        final Tensor advantage = outA.forward(activation.apply(firstA.forward(x)));
        if (!dueling)
        {
            return advantage;
        }
        final Tensor value = outV.forward(activation.apply(firstV.forward(x)));
        // Q = V + (A - mean_a A): sub's alpha form keeps it to three native calls.
        return value.add(advantage.sub(advantage.mean(ACTION_DIM, true, SAME_TYPE), ONE));
    }

    /** @return the activation after each hidden Linear layer */
    public Activation activation()
    {
        return activation;
    }

    /** @return the libtorch module (owned here; do not close) */
    public Module module()
    {
        if (natives.isClosed())
        {
            throw new IllegalStateException(this + " is closed");
        }
        return module;
    }

    /** @return whether the head is dueling */
    public boolean dueling()
    {
        return dueling;
    }

    /** @return a copy of the encoder's hidden widths */
    public long[] hidden()
    {
        return hidden.clone();
    }

    /** Frees the module. */
    @Override
    public void close()
    {
        natives.close();
    }

    @Override
    public String toString()
    {
        return "QNetwork" + Arrays.toString(hidden) + (dueling ? " dueling" : "");
    }
}
