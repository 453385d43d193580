package org.ding4j.torch;

import java.util.Objects;

import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * A whole DQN update of an MLP-family Q-network in one native call ({@code native/ding4j_dqn.h}): the online
 * forward on the observations, the online and target forwards on the next observations, the double-DQN target,
 * MSE or Huber (delta 1) loss with importance weights, and the backward, with every matrix product through the
 * {@code cblas_sgemm} of the OpenBLAS the presets load. Gradients are written into the online net's flat gradient
 * buffer (as after {@code zero_grad} and {@code backward}), so gradient all-reduce, clipping and the fused optimizer
 * step stay as they are; the caller runs them. libtorch's autograd is the general path and the reference this is
 * tested against.
 * <p>
 * The network: {@code L} encoder layers {@code Linear} + activation (ReLU or Tanh), then a head of
 * {@code Linear(h, h)} + activation and
 * {@code Linear(h, actions)}, and, when dueling, a second such head to one value with {@code Q = V + A - mean(A)}.
 * Its parameters are named by offsets into the flat buffer (the caller knows the module's layout), checked here.
 * Tensors are bound once ({@link #bind}) and their addresses kept, so an update allocates nothing; a binding
 * belongs to the update that made it and is checked before each call, and every action is range-checked natively,
 * so that nothing a caller passes can make the native code read or write outside its buffers. Not thread-safe.
 */
public final class FusedDqnUpdate implements AutoCloseable
{
    private final NativeOwner natives = new NativeOwner("FusedDqnUpdate");
    private final int batch;
    private final int obs;
    private final int actions;
    private final long parameterCount;
    /** The online net's values and gradients and the target net's values: checked before each call. */
    private final Binding nets;
    private final NativeKernels.DqnStats stats;
    /** Where the native update reports an out-of-range action: [index, value]. */
    private final LongPointer error;
    private final FusedNetHandle kernel;
    /** The online net, told to a reducer that overlaps backward. */
    private final FlatParameters online;

    /**
     * A batch's tensors, checked once and held (with their addresses) for this update only: see {@link #update}.
     * Dropping it releases them.
     */
    public static final class Batch
    {
        private static final String[] NAMES = {"obs", "next_obs", "action", "return", "bootstrap", "weight", "td"};

        private final Binding tensors;

        private Batch(final FusedDqnUpdate owner, final Tensor[] all)
        {
            this.tensors = new Binding(owner, "FusedDqnUpdate", NAMES, all);
        }
    }

    /**
     * @param online  the online net's flat parameters (one float32 CPU group)
     * @param target  the target net's, the same layout
     * @param hidden  encoder widths, at least one
     * @param obs     observation width
     * @param actions number of actions
     * @param dueling whether the head is dueling
     * @param activation the activation after each hidden Linear layer
     * @param batch   samples per update
     * @param offsets float offsets of weight and bias of each layer: encoder layers, head A first and second, and
     *                when dueling head V first and second
     * @throws IllegalArgumentException naming what does not fit (group, dtype, device, a layer outside the buffer)
     */
    public FusedDqnUpdate(final FlatParameters online, final FlatParameters target, final long[] hidden,
        final int obs, final int actions, final boolean dueling, final Activation activation, final int batch,
        final long[] offsets)
    {
        Objects.requireNonNull(online, "online");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(activation, "activation");
        if (hidden.length < 1 || obs < 1 || actions < 1 || batch < 1)
        {
            throw new IllegalArgumentException("FusedDqnUpdate: expected hidden widths, obs, actions and batch >= 1");
        }
        final Tensor values = Checks.singleCpuFloatGroup(online, "FusedDqnUpdate: the online net");
        final Tensor targetValues = Checks.singleCpuFloatGroup(target, "FusedDqnUpdate: the target net");
        if (values.numel() != targetValues.numel())
        {
            throw new IllegalArgumentException("FusedDqnUpdate: online and target nets differ in size ("
                + values.numel() + " vs " + targetValues.numel() + ")");
        }
        final int layers = hidden.length + (dueling ? 4 : 2);
        if (offsets.length != 2 * layers)
        {
            throw new IllegalArgumentException("FusedDqnUpdate: expected " + 2 * layers + " offsets, got "
                + offsets.length);
        }
        checkLayers(hidden, obs, actions, dueling, offsets, values.numel());
        this.online = online;
        this.batch = batch;
        this.obs = obs;
        this.parameterCount = values.numel();
        this.actions = actions;
        this.nets = new Binding(this, "FusedDqnUpdate", new String[] {"the online net's parameters",
            "the online net's gradients", "the target net's parameters"}, values, online.group(0).grads(),
            targetValues);
        this.stats = natives.own(new NativeKernels.DqnStats());
        this.error = natives.own(new LongPointer(2));
        final long[] dims = new long[hidden.length + 6];
        dims[0] = hidden.length;
        dims[1] = obs;
        System.arraycopy(hidden, 0, dims, 2, hidden.length);
        dims[2 + hidden.length] = actions;
        dims[3 + hidden.length] = dueling ? 1 : 0;
        dims[4 + hidden.length] = batch;
        dims[5 + hidden.length] = activation.ordinal();
        try (LongPointer d = new LongPointer(dims); LongPointer o = new LongPointer(offsets))
        {
            kernel = new FusedNetHandle("FusedDqnUpdate",
                NativeKernels.dqn_create(Natives.sgemmAddress(), d.address(), o.address()));
        }
    }

    private static void checkLayers(final long[] hidden, final int obs, final int actions, final boolean dueling,
        final long[] offsets, final long numel)
    {
        final long h = hidden[hidden.length - 1];
        final long[][] shapes = new long[offsets.length / 2][];
        long in = obs;
        for (int l = 0; l < hidden.length; l++)
        {
            shapes[l] = new long[] {hidden[l], in};
            in = hidden[l];
        }
        shapes[hidden.length] = new long[] {h, h};
        shapes[hidden.length + 1] = new long[] {actions, h};
        if (dueling)
        {
            shapes[hidden.length + 2] = new long[] {h, h};
            shapes[hidden.length + 3] = new long[] {1, h};
        }
        for (int l = 0; l < shapes.length; l++)
        {
            final long w = offsets[2 * l];
            final long b = offsets[2 * l + 1];
            if (w < 0 || b < 0 || w + shapes[l][0] * shapes[l][1] > numel || b + shapes[l][0] > numel)
            {
                throw new IllegalArgumentException("FusedDqnUpdate: layer " + l + " (" + shapes[l][0] + "x"
                    + shapes[l][1] + ") at offsets " + w + "/" + b + " lies outside the " + numel + " parameters");
            }
        }
    }

    /**
     * Checks and binds a batch's tensors (contiguous CPU: obs and next obs float [batch, obs], action int64
     * [batch], return, bootstrap, weight and the |TD| output float [batch]).
     *
     * @return the binding, for {@link #update}
     * @throws IllegalArgumentException naming the tensor that does not fit
     */
    public Batch bind(final Tensor obsT, final Tensor nextObsT, final Tensor actionT, final Tensor returnT,
        final Tensor bootstrapT, final Tensor weightT, final Tensor tdT)
    {
        final Tensor[] all = {obsT, nextObsT, actionT, returnT, bootstrapT, weightT, tdT};
        for (int i = 0; i < all.length; i++)
        {
            final Tensor t = Objects.requireNonNull(all[i], Batch.NAMES[i]);
            final boolean matrix = i < 2;
            final boolean ok = !t.isNull() && !t.is_cuda() && t.is_contiguous() && t.size(0) == batch
                && (matrix ? 2 == t.dim() && t.size(1) == obs : 1 == t.dim())
                && (2 == i ? torch.ScalarType.Long.value == t.scalar_type().value : Checks.isFloat32(t));
            if (!ok)
            {
                throw new IllegalArgumentException("FusedDqnUpdate: " + Batch.NAMES[i] + " must be a contiguous CPU "
                    + (2 == i ? "int64" : "float32") + " tensor of " + (matrix ? "[" + batch + ", " + obs + "]"
                    : "[" + batch + "]") + ", got " + (t.isNull() ? "a closed tensor" : Checks.describe(t)));
            }
        }
        return new Batch(this, all);
    }

    /**
     * One update's forward and backward: the gradients are in the online net's gradient buffer afterwards, |TD
     * error| per sample in the bound td tensor. Before anything is written, the binding is checked (made by this
     * update, no tensor closed or resized since, the nets neither) and the native code checks every action against
     * the action count.
     *
     * @param b     the bound batch
     * @param huber Huber loss (delta 1) instead of squared error
     * @throws IllegalArgumentException naming the tensor and the index, when the binding does not hold or an
     *                                  action lies outside {@code [0, actions)}; nothing was written then
     */
    public void update(final Batch b, final boolean huber)
    {
        update(b, huber, null);
    }

    /**
     * {@link #update(Batch, boolean)}, telling a reducer that {@link GradientReducer#overlapsBackward() overlaps
     * backward} after each layer's gradients which are final (backward then takes one native call per layer).
     *
     * @param b       the bound batch
     * @param huber   Huber loss (delta 1) instead of squared error
     * @param reducer the online net's optimizer's reducer, or null
     * @throws IllegalArgumentException as {@link #update(Batch, boolean)}
     */
    public void update(final Batch b, final boolean huber, final GradientReducer reducer)
    {
        final Binding t = b.tensors;
        t.check(this);
        nets.check(this);
        final boolean staged = null != reducer && reducer.overlapsBackward();
        final int status = NativeKernels.dqn_update(kernel.get(), nets.address(0), nets.address(1), nets.address(2),
            t.address(0), t.address(1), t.address(2), t.address(3), t.address(4), t.address(5), huber ? 1 : 0,
            stats.address(), t.address(6), error.address(), staged ? 0 : 1);
        if (0 != status)
        {
            throw new IllegalArgumentException("FusedDqnUpdate: action[" + error.get(0) + "] = " + error.get(1)
                + " lies outside [0, " + actions + ")");
        }
        if (staged)
        {
            kernel.backwardInStages(reducer, online);
        }
    }

    /** A greedy forward's tensors, checked once and held (with their addresses) for this update's forwards only. */
    public static final class Forward
    {
        private static final String[] NAMES = {"the forward's net", "obs", "q"};

        private final Binding tensors;
        private final int rows;

        private Forward(final FusedDqnUpdate owner, final Tensor net, final Tensor obs, final Tensor q, final int rows)
        {
            this.tensors = new Binding(owner, "FusedDqnUpdate", NAMES, net, obs, q);
            this.rows = rows;
        }
    }

    /**
     * Binds a forward of {@code net} (a net of this update's layout: the online one, or a copy of it) on up to the
     * batch size of observations.
     *
     * @param net    the net's flat parameters
     * @param obsT   contiguous CPU float32 [rows, obs], at most the batch size of rows
     * @param qT     contiguous CPU float32 [rows, actions], where the Q-values go
     * @return the binding, for {@link #qValues}
     * @throws IllegalArgumentException naming what does not fit
     */
    public Forward bindForward(final FlatParameters net, final Tensor obsT, final Tensor qT)
    {
        final Tensor values = Checks.singleCpuFloatGroup(net, "FusedDqnUpdate: the forward's net");
        if (values.numel() != parameterCount)
        {
            throw new IllegalArgumentException("FusedDqnUpdate: the forward's net has " + values.numel()
                + " parameters, this layout " + parameterCount);
        }
        final long rows = obsT.isNull() ? -1 : obsT.size(0);
        final boolean ok = !obsT.isNull() && !qT.isNull() && !obsT.is_cuda() && !qT.is_cuda() && obsT.is_contiguous()
            && qT.is_contiguous() && 2 == obsT.dim() && 2 == qT.dim() && rows >= 1 && rows <= batch
            && obsT.size(1) == obs && qT.size(0) == rows && qT.size(1) == actions
            && Checks.isFloat32(obsT) && Checks.isFloat32(qT);
        if (!ok)
        {
            throw new IllegalArgumentException("FusedDqnUpdate: a forward needs contiguous CPU float32 obs [rows, " + obs
                + "] and q [rows, " + actions + "] with 1 <= rows <= " + batch + ", got obs "
                + (obsT.isNull() ? "closed" : Checks.describe(obsT)) + " and q "
                + (qT.isNull() ? "closed" : Checks.describe(qT)));
        }
        return new Forward(this, values, obsT, qT, (int)rows);
    }

    /**
     * Q-values of the bound observations into the bound output. Uses this instance's scratch memory: one thread
     * at a time, and not while {@link #update} runs on another.
     *
     * @param f the binding
     * @throws IllegalArgumentException if the binding is another update's, or a tensor of it was closed or resized
     */
    public void qValues(final Forward f)
    {
        final Binding t = f.tensors;
        t.check(this);
        if (0 != NativeKernels.dqn_q_values(kernel.get(), t.address(0), t.address(1), f.rows, t.address(2)))
        {
            // bindForward checked the rows: reaching this means the binding and the workspace disagree.
            throw new IllegalStateException("FusedDqnUpdate: the native forward refused " + f.rows + " rows (batch "
                + batch + ")");
        }
    }

    /** @return the last update's loss (weighted mean) */
    public double loss()
    {
        return stats.loss();
    }

    /** @return the last update's mean online Q-value over the batch and actions */
    public double qMean()
    {
        return stats.q();
    }

    /** @return the last update's mean target-net Q-value at the next observations */
    public double targetQMean()
    {
        return stats.target_q();
    }

    @Override
    public void close()
    {
        kernel.close();
        natives.close();
    }
}
