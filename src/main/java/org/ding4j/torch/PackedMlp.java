package org.ding4j.torch;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.Pointer;

/**
 * A small MLP's forward for acting and serving (batch 1 to a few rows) in one native call with no allocation:
 * {@code native/ding4j_dense.h}. The plan names where each dense layer's weight and bias sit in a flat parameter
 * vector (PyTorch's {@code Linear} layout, as {@link FlatParameters} holds it), its widths and activation, and which
 * earlier output it reads; with {@code dueling} the last three layers' outputs A (layer n-3) and V (layer n-1, one
 * output) combine as {@code Q = V + (A - mean A)}. {@link #pack} copies the weights into a {@link NativeFloats}
 * laid out for the kernel (each weight transposed, widths padded to 16 floats), {@link #forward} runs rows on it.
 * The kernel has AVX-512, AVX2+FMA and plain C++ variants; the widest the CPU runs is used.
 * <p>
 * Thread contract: the plan is immutable, any thread; a {@link Scratch} belongs to one thread at a time.
 */
public final class PackedMlp
{
    /** No activation. */
    public static final int IDENTITY = 0;
    /** {@code max(0, v)}. */
    public static final int RELU = 1;
    /** {@code tanh(v)}. */
    public static final int TANH = 2;
    /** Variant numbers of {@link #supports(int)}: plain C++, AVX2 with FMA, AVX-512. */
    public static final int PLAIN = 0;
    /** @see #PLAIN */
    public static final int AVX2 = 1;
    /** @see #PLAIN */
    public static final int AVX512 = 2;

    private static final int FIELDS = 7;
    private static final int PAD = 16;
    private static final int MAX_LAYERS = 64;

    /**
     * One dense layer.
     *
     * @param weight     where its weight {@code [out, in]} starts in the flat parameters (floats)
     * @param bias       where its bias {@code [out]} starts
     * @param in         inputs
     * @param out        outputs
     * @param activation {@link #IDENTITY}, {@link #RELU} or {@link #TANH}
     * @param source     -1: it reads the observation; k: it reads layer k's output (k before this layer)
     */
    public record Layer(long weight, long bias, int in, int out, int activation, int source)
    {
    }

    private final List<Layer> layers;
    private final boolean dueling;
    private final ByteBuffer plan;
    private final long planAddress;
    private final int packedFloats;
    private final int scratchFloats;
    private final int inputWidth;
    private final int outputWidth;
    private final long parameterFloats;

    /**
     * @param layers  the layers in the order they run
     * @param dueling whether the output is the dueling combination of layers n-3 (A) and n-1 (V)
     * @throws IllegalArgumentException naming the layer and the rule it breaks
     */
    public PackedMlp(final List<Layer> layers, final boolean dueling)
    {
        this.layers = List.copyOf(Objects.requireNonNull(layers, "layers"));
        this.dueling = dueling;
        final int n = this.layers.size();
        if (n < 1 || n > MAX_LAYERS || (dueling && n < 3))
        {
            throw new IllegalArgumentException("layers: expected 1 to " + MAX_LAYERS + " layers (3 or more with a "
                + "dueling head), got " + n);
        }
        // The plan as the kernel reads it: 7 int64 per layer.
        plan = ByteBuffer.allocateDirect(Long.BYTES * FIELDS * n).order(ByteOrder.nativeOrder());
        final long[] fields = new long[FIELDS * n];
        int packed = 0;
        int scratch = 0;
        long needed = 0;
        final int inputs = this.layers.get(0).in();
        for (int l = 0; l < n; l++)
        {
            final Layer layer = this.layers.get(l);
            final String name = "layers[" + l + "]";
            if (layer.in() < 1 || layer.out() < 1 || layer.in() > 1 << 16 || layer.out() > 1 << 16)
            {
                throw new IllegalArgumentException(name + ": expected widths 1 to 65536, got in " + layer.in()
                    + ", out " + layer.out());
            }
            if (layer.activation() < IDENTITY || layer.activation() > TANH)
            {
                throw new IllegalArgumentException(name + ".activation: expected 0 (identity), 1 (relu) or 2 "
                    + "(tanh), got " + layer.activation());
            }
            if (layer.source() < -1 || layer.source() >= l)
            {
                throw new IllegalArgumentException(name + ".source: expected -1 (the observation) or an earlier "
                    + "layer 0 to " + (l - 1) + ", got " + layer.source());
            }
            final int expectedIn = layer.source() < 0 ? inputs : this.layers.get(layer.source()).out();
            if (layer.in() != expectedIn)
            {
                throw new IllegalArgumentException(name + ".in: expected " + expectedIn + " (the width of what it "
                    + "reads), got " + layer.in());
            }
            if (layer.weight() < 0 || layer.bias() < 0)
            {
                throw new IllegalArgumentException(name + ": expected offsets >= 0, got weight " + layer.weight()
                    + ", bias " + layer.bias());
            }
            final int padded = (layer.out() + PAD - 1) / PAD * PAD;
            fields[FIELDS * l] = layer.weight();
            fields[FIELDS * l + 1] = layer.bias();
            fields[FIELDS * l + 2] = layer.in();
            fields[FIELDS * l + 3] = layer.out();
            fields[FIELDS * l + 4] = layer.activation();
            fields[FIELDS * l + 5] = layer.source();
            fields[FIELDS * l + 6] = packed;
            final long packedNow = packed + (long)(layer.in() + 1) * padded;
            if (packedNow > NativeFloats.MAX_SIZE)
            {
                throw new IllegalArgumentException(name + ": expected the packed weights within " + NativeFloats.MAX_SIZE
                    + " floats, got " + packedNow + " floats up to this layer");
            }
            packed = (int)packedNow;
            scratch += padded;
            needed = Math.max(needed, Math.max(layer.weight() + (long)layer.in() * layer.out(),
                layer.bias() + layer.out()));
        }
        if (this.layers.get(0).source() != -1)
        {
            throw new IllegalArgumentException("layers[0].source: expected -1 (the observation), got "
                + this.layers.get(0).source());
        }
        if (dueling && 1 != this.layers.get(n - 1).out())
        {
            throw new IllegalArgumentException("layers[" + (n - 1) + "].out: a dueling head's V has one output, got "
                + this.layers.get(n - 1).out());
        }
        plan.asLongBuffer().put(fields);
        this.planAddress = new Pointer(plan).address();
        this.packedFloats = packed;
        this.scratchFloats = scratch;
        this.inputWidth = inputs;
        this.outputWidth = this.layers.get(dueling ? n - 3 : n - 1).out();
        this.parameterFloats = needed;
    }

    /**
     * The plan of an MLP built as {@link Mlp#of}: {@code Linear} layers named {@code PREFIX0, PREFIX2, PREFIX4, ...}
     * in {@code params} with {@code hidden} between them and none after the last.
     *
     * @param params the flat parameters holding the MLP
     * @param prefix its parameters' name prefix ({@code ""} when the parameters are the MLP's alone)
     * @param sizes  its widths, input first
     * @param hidden the activation between layers
     * @return the plan
     */
    public static PackedMlp sequential(final FlatParameters params, final String prefix, final long[] sizes,
        final Activation hidden)
    {
        final List<String> names = params.names();
        final List<Layer> layers = new ArrayList<>();
        for (int l = 0; l + 1 < sizes.length; l++)
        {
            final int w = names.indexOf(prefix + 2 * l + ".weight");
            final int b = names.indexOf(prefix + 2 * l + ".bias");
            if (w < 0 || b < 0)
            {
                throw new IllegalArgumentException("params: the MLP has no layer " + prefix + 2 * l + " (" + names
                    + ")");
            }
            final boolean last = l + 2 == sizes.length;
            layers.add(new Layer(params.offset(w), params.offset(b), (int)sizes[l], (int)sizes[l + 1],
                last ? IDENTITY : Activation.TANH == hidden ? TANH : RELU, l - 1));
        }
        return new PackedMlp(layers, false);
    }

    /** @return the layers, in the order they run */
    public List<Layer> layers()
    {
        return layers;
    }

    /** @return whether the output is the dueling combination of layers n-3 and n-1 */
    public boolean dueling()
    {
        return dueling;
    }

    /** @return floats a packed copy of the weights takes */
    public int packedFloats()
    {
        return packedFloats;
    }

    /** @return floats per observation row */
    public int inputWidth()
    {
        return inputWidth;
    }

    /** @return floats per output row (A's width with a dueling head) */
    public int outputWidth()
    {
        return outputWidth;
    }

    /**
     * @param variant {@link #PLAIN}, {@link #AVX2} or {@link #AVX512}
     * @return whether this CPU runs it
     */
    public static boolean supports(final int variant)
    {
        NativeKernels.load();
        return PLAIN <= variant && variant <= AVX512 && 0 != NativeKernels.dense_variant(variant);
    }

    /** @return the variant {@link #forward} uses on this CPU */
    public static int widestVariant()
    {
        NativeKernels.load();
        return NativeKernels.dense_variant(-1);
    }

    /**
     * Copies the weights of {@code source} into {@code into}, packed.
     *
     * @param source the flat parameters (one CPU float32 group)
     * @param into   at least {@link #packedFloats()} floats
     */
    public void pack(final FlatParameters source, final NativeFloats into)
    {
        if (1 != source.groupCount() || !source.group(0).isCpuFloat32() || source.group(0).numel() < parameterFloats)
        {
            throw new IllegalArgumentException("source: expected one CPU float32 group of at least " + parameterFloats
                + " floats, got " + source.groupCount() + " group(s) of " + source.numel() + " floats");
        }
        checkSize("into", into, packedFloats);
        NativeKernels.dense_pack(planAddress, layers.size(), source.group(0).valuesAddress(), into.address());
        Reference.reachabilityFence(into);
        Reference.reachabilityFence(plan);
    }

    /**
     * The forward of each observation row on packed weights.
     *
     * @param packed  from {@link #pack}
     * @param obs     {@code [rows, inputWidth]} row-major
     * @param rows    rows, >= 1
     * @param out     receives {@code [rows, outputWidth]}
     * @param scratch this thread's scratch ({@link #newScratch}), grown here once when rows exceed it
     */
    public void forward(final NativeFloats packed, final float[] obs, final int rows, final float[] out,
        final Scratch scratch)
    {
        forward(packed, obs, rows, out, scratch, -1);
    }

    /**
     * As {@link #forward(NativeFloats, float[], int, float[], Scratch)} on a chosen variant (tests compare them).
     *
     * @param packed  from {@link #pack}
     * @param obs     {@code [rows, inputWidth]} row-major
     * @param rows    rows, >= 1
     * @param out     receives {@code [rows, outputWidth]}
     * @param scratch this thread's scratch
     * @param variant one {@link #supports} says this CPU runs
     */
    public void forward(final NativeFloats packed, final float[] obs, final int rows, final float[] out,
        final Scratch scratch, final int variant)
    {
        if (rows < 1 || obs.length < (long)rows * inputWidth || out.length < (long)rows * outputWidth)
        {
            throw new IllegalArgumentException("obs, out: expected " + rows + " rows of " + inputWidth + " and "
                + outputWidth + " floats, got " + obs.length + " and " + out.length + " floats");
        }
        if (-1 != variant && !supports(variant))
        {
            throw new IllegalArgumentException("variant: this CPU does not run variant " + variant);
        }
        checkSize("packed", packed, packedFloats);
        if (scratch.plan != this)
        {
            throw new IllegalArgumentException("scratch: made by another plan (newScratch of this one)");
        }
        scratch.fit(rows);
        scratch.obs.view().put(0, obs, 0, rows * inputWidth);
        NativeKernels.dense_forward(planAddress, layers.size(), dueling ? 1 : 0, packed.address(),
            scratch.obs.address(), rows, scratch.hidden.address(), scratch.out.address(), variant);
        scratch.out.view().get(0, out, 0, rows * outputWidth);
        Reference.reachabilityFence(packed);
        Reference.reachabilityFence(plan);
        Reference.reachabilityFence(scratch);
    }

    /**
     * @param rows rows it takes at once
     * @return scratch for one thread's {@link #forward} calls
     */
    public Scratch newScratch(final int rows)
    {
        return new Scratch(this, rows);
    }

    private static void checkSize(final String name, final NativeFloats buffer, final int floats)
    {
        if (buffer.size() < floats)
        {
            throw new IllegalArgumentException(name + ": expected at least " + floats + " floats, got "
                + buffer.size());
        }
    }

    /**
     * One thread's buffers for {@link #forward}: the observation rows, every layer's output, the output rows. They
     * grow, once, to the most rows a forward has taken.
     */
    public static final class Scratch
    {
        private final PackedMlp plan;
        private final NativeFloats hidden;
        private int rows;
        private NativeFloats obs;
        private NativeFloats out;

        private Scratch(final PackedMlp plan, final int rows)
        {
            if (rows < 1)
            {
                throw new IllegalArgumentException("rows: expected >= 1, got " + rows);
            }
            this.plan = plan;
            this.hidden = new NativeFloats(plan.scratchFloats);
            fit(rows);
        }

        /** Makes room for {@code rows} rows (a layer's outputs are per row: {@link #hidden} never grows). */
        private void fit(final int wanted)
        {
            if (wanted > rows)
            {
                obs = new NativeFloats(Math.multiplyExact(wanted, plan.inputWidth));
                out = new NativeFloats(Math.multiplyExact(wanted, plan.outputWidth));
                rows = wanted;
            }
        }
    }
}
