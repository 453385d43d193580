package org.ding4j.dist;

import java.util.List;
import java.util.Objects;

import org.bytedeco.pytorch.BoolVector;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.Reducer;
import org.bytedeco.pytorch.SizeTStringMap;
import org.bytedeco.pytorch.SizeTVector;
import org.bytedeco.pytorch.SizeTVectorVector;
import org.bytedeco.pytorch.T_SizeTVectorVectorSizeTVector_T;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedOptimizer;
import org.ding4j.torch.GradientReducer;

/**
 * Data-parallel training of a user's own libtorch modules on c10d's {@code Reducer}, the C++ engine under PyTorch's
 * {@code DistributedDataParallel}: it registers its own autograd hooks on every parameter, and while backward runs it
 * all-reduces each gradient bucket (reverse parameter order, {@code dist.bucket_mb} each, as DDP cuts them) as soon
 * as all of that bucket's gradients are accumulated; backward ends with the averaged gradients in place. Use it where
 * the update is libtorch autograd ({@code fused_update: false}, or a {@code Policy} of one's own); ding4j's fused
 * updates overlap through {@link GradientSync} instead.
 * <p>
 * A policy's update then reads, with {@code dp} from {@link #attach}:
 * <pre>{@code
 * params.zeroGrad();
 * optimizer.backward(lossOf(module.forward(x), y));   // the Reducer all-reduces the buckets while this runs
 * optimizer.step();                                   // checks every bucket was reduced, then steps
 * }</pre>
 * Options as DDP's: unused-parameter detection off by default (a parameter that gets no gradient then leaves its
 * bucket unreduced, and the step fails naming that; with it on, the loss's graph is searched each step),
 * {@code static_graph}. Gradients are not bucket views ({@code gradient_as_bucket_view}): the
 * parameters' gradients are views of the optimizer's flat buffer, which the fused step reads, so the Reducer copies
 * each gradient into its bucket and the average back. CPU tensors on the group's Gloo backend only (a CUDA module is
 * refused: the presets' {@code ProcessGroup} is made here around Gloo alone). Every rank ends each step with
 * bit-identical parameters; with 2 ranks they equal {@link GradientSync}'s flat all-reduce bit for bit (halving
 * before the sum or after it is exact).
 * <p>
 * Thread contract: the training thread; close it before its {@link DistGroup}.
 */
public final class DataParallel implements GradientReducer, AutoCloseable
{
    /**
     * DDP's options.
     *
     * @param bucketBytes          the bucket cap in bytes ({@code dist.bucket_mb}); 0: one bucket for everything
     * @param findUnusedParameters search the outputs' graph for parameters without a gradient each step
     * @param staticGraph          the set of used parameters never changes (lets the Reducer skip that search)
     */
    public record Options(long bucketBytes, boolean findUnusedParameters, boolean staticGraph)
    {
        /** Checks the cap. */
        public Options
        {
            if (bucketBytes < 0)
            {
                throw new IllegalArgumentException("bucketBytes: expected >= 0 (0: one bucket), got " + bucketBytes);
            }
        }

        /** @return {@link GradientSync#DEFAULT_BUCKET_MB} buckets, no unused-parameter search, no static graph */
        public static Options defaults()
        {
            return new Options(GradientSync.bytesOf(GradientSync.DEFAULT_BUCKET_MB), false, false);
        }
    }

    private final Reducer reducer;
    private final DistGroup group;
    private final DistInfo info;
    private final FusedOptimizer<?> optimizer;
    private final TensorVector parameters;
    private final TensorVector noOutputs = new TensorVector();
    private final Options options;
    private final int buckets;
    private boolean prepared;
    private long reductions;
    private boolean closed;

    private DataParallel(final Reducer reducer, final DistGroup group, final FusedOptimizer<?> optimizer,
        final TensorVector parameters, final Options options, final int buckets)
    {
        this.reducer = reducer;
        this.group = group;
        this.info = group.info();
        this.optimizer = optimizer;
        this.parameters = parameters;
        this.options = options;
        this.buckets = buckets;
    }

    /**
     * Broadcasts rank 0's parameters to every rank, builds the Reducer over {@code modules}' parameters and makes it
     * {@code optimizer}'s gradient reducer.
     *
     * @param group     the process group
     * @param optimizer the optimizer over exactly these modules' parameters (its {@link FlatParameters})
     * @param modules   the modules, in the order their parameters were flattened
     * @param options   bucket cap, unused-parameter search, static graph
     * @return the data-parallel wrapper; close it after training, before the group
     * @throws IllegalArgumentException if the modules' parameters are not the optimizer's, not on the CPU, or one
     *                                  does not require a gradient (c10d's Reducer reads every parameter's)
     * @throws DistException            if the ranks' layouts (parameter names and shapes, bucket cap, options)
     *                                  differ, on every rank, or the broadcast fails
     */
    public static DataParallel attach(final DistGroup group, final FusedOptimizer<?> optimizer,
        final List<Module> modules, final Options options)
    {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(options, "options");
        final FlatParameters flat = optimizer.parameters();
        final TensorVector parameters = new TensorVector();
        long numel = 0;
        for (final Module module : modules)
        {
            final TensorVector own = module.parameters();
            for (long i = 0; i < own.size(); i++)
            {
                final Tensor p = own.get(i);
                if (!p.is_cpu())
                {
                    throw new IllegalArgumentException("modules: parameter " + parameters.size() + " is on "
                        + p.device().str().getString() + "; DataParallel runs CPU tensors on Gloo");
                }
                if (!p.requires_grad())
                {
                    // The Reducer would read its missing gradient (a crash in c10d, not an error).
                    throw new IllegalArgumentException("modules: parameter " + parameters.size() + " ("
                        + (parameters.size() < flat.size() ? flat.name((int)parameters.size()) : "?") + ") does not "
                        + "require a gradient; DataParallel averages every parameter's: keep a frozen tensor out of "
                        + "the optimizer's parameters (a buffer, say)");
                }
                numel += p.numel();
                parameters.push_back(p);
            }
        }
        if (parameters.size() != flat.size() || numel != flat.numel())
        {
            throw new IllegalArgumentException("modules: expected the optimizer's " + flat.size() + " parameters ("
                + flat.numel() + " floats), got " + parameters.size() + " (" + numel + " floats)");
        }
        final long cap = 0 == options.bucketBytes() ? Math.max(1, numel * Float.BYTES) : options.bucketBytes();
        // The ranks' layouts are compared before the broadcast (Gloo aborts the process on mismatched sizes).
        GradientSync.broadcastParameters(group, flat, "bucket cap " + cap + ", find unused "
            + options.findUnusedParameters() + ", static graph " + options.staticGraph());
        // DDP broadcasts the modules' buffers (running statistics) too, so every rank starts from rank 0's.
        for (final Module module : modules)
        {
            try (TensorVector buffers = module.buffers())
            {
                for (long i = 0; i < buffers.size(); i++)
                {
                    group.broadcast(buffers.get(i), 0, "broadcast buffers");
                }
            }
        }
        // As DDP: cut in parameter order at the cap (a one-element list of limits), then handed over last bucket
        // first, the order backward makes them ready.
        // The tuple is held until the buckets are copied out: get0() is a view into it, and a tuple left unreachable
        // could be freed by JavaCPP's collector-driven deallocator while the view is read (std::bad_alloc, or
        // std::bad_array_new_length, from a garbage bucket copied into the reversed list).
        try (SizeTVector limits = new SizeTVector(new long[] {cap});
            T_SizeTVectorVectorSizeTVector_T assignment = torch.compute_bucket_assignment_by_size(parameters, limits);
            SizeTVectorVector reversed = new SizeTVectorVector();
            BoolVector sparse = new BoolVector(new boolean[(int)parameters.size()]);
            SizeTStringMap names = new SizeTStringMap())
        {
            final SizeTVectorVector cut = assignment.get0();
            for (long b = cut.size() - 1; b >= 0; b--)
            {
                reversed.push_back(cut.get(b));
            }
            for (int i = 0; i < flat.size(); i++)
            {
                names.put(i, flat.name(i));
            }
            final Reducer reducer = new Reducer(parameters, reversed, group.processGroup(), sparse, cap,
                options.findUnusedParameters(), false, names, cap, false, false);
            if (options.staticGraph())
            {
                reducer.set_static_graph();
            }
            final DataParallel dp = new DataParallel(reducer, group, optimizer, parameters, options,
                (int)reversed.size());
            optimizer.gradientReducer(dp);
            return dp;
        }
    }

    /**
     * Runs {@code loss}'s backward with the Reducer armed for it (as DDP's forward arms it): the buckets are
     * all-reduced while backward runs, and it returns with the averaged gradients in place.
     *
     * @param loss the scalar loss of this step
     * @throws DistException naming this rank when the backward or one of its collectives fails (a peer gone, the
     *                       timeout)
     * @throws IllegalStateException when closed
     */
    @Override
    public void backward(final Tensor loss)
    {
        checkOpen();
        // With the search on, the loss's graph is what reaches every used parameter (DDP searches its outputs').
        final TensorVector searched = options.findUnusedParameters() ? new TensorVector(loss) : noOutputs;
        try
        {
            // As DDP's forward: once the first backward has shown the order gradients become ready, the buckets are
            // re-cut in that order (the same call on every rank); until then the Reducer records that order, and
            // this call is what ends the recording.
            reducer.rebuild_buckets();
            reducer.prepare_for_backward(searched);
            prepared = true;
            loss.backward();
        }
        catch (final RuntimeException ex)
        {
            // With what a failed peer reported, if it did (its own exception), as GradientSync's errors say.
            throw group.failure("backward with gradient all-reduce", String.valueOf(ex.getMessage()).lines()
                .findFirst().orElse(""), ex);
        }
        finally
        {
            if (searched != noOutputs)
            {
                searched.close();
            }
        }
    }

    /**
     * Checks that the backward since the last step ({@link #backward}) reduced every bucket (the averages are then in
     * the gradients already).
     *
     * @throws IllegalStateException without a prepared backward
     * @throws DistException         naming the likely cause when a bucket was not reduced (a parameter without a
     *                               gradient, the unused-parameter case) or a collective failed
     */
    @Override
    public void reduce(final FlatParameters params)
    {
        checkOpen();
        if (!prepared)
        {
            throw new IllegalStateException("DataParallel: a step whose backward did not run through it (call "
                + "optimizer.backward(loss) or DataParallel.backward(loss)): the gradients were not averaged");
        }
        prepared = false;
        try
        {
            reducer.check_finalized();
        }
        catch (final RuntimeException ex)
        {
            throw group.failure("allreduce gradients", "the backward did not reduce every bucket: "
                + unreduced(String.valueOf(ex.getMessage())) + " got no gradient (not used by the loss; use every "
                + "parameter, or findUnusedParameters), or a collective failed", ex);
        }
        reductions++;
    }

    /**
     * @param message c10d's error, which lists the indices of the parameters without a gradient
     * @return their names, or "a parameter" where the message lists none
     */
    private String unreduced(final String message)
    {
        final java.util.regex.Matcher line = java.util.regex.Pattern
            .compile("did not receive grad for rank \\d+: ([0-9 ]+)").matcher(message);
        if (!line.find())
        {
            return "a parameter";
        }
        final FlatParameters flat = optimizer.parameters();
        final List<String> names = new java.util.ArrayList<>();
        for (final String index : line.group(1).trim().split(" +"))
        {
            final int i = Integer.parseInt(index);
            names.add(i < flat.size() ? flat.name(i) : "#" + i);
        }
        return "parameter(s) " + String.join(", ", names);
    }

    /** @return the buckets of the first backward (later ones are re-cut in the order gradients became ready) */
    public int bucketCount()
    {
        return buckets;
    }

    /** @return steps whose gradients were averaged */
    public long reductions()
    {
        return reductions;
    }

    private void checkOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("DataParallel: closed");
        }
    }

    /** Removes the Reducer's autograd hooks and frees it; the modules train on alone. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (optimizer.gradientReducer() == this)
        {
            optimizer.gradientReducer(null);
        }
        reducer.remove_autograd_hooks();
        reducer.close();
        parameters.close();
        noOutputs.close();
    }
}
