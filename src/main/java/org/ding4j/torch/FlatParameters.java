package org.ding4j.torch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.StringTensorDict;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;

/**
 * A module's parameters and their gradients moved into contiguous buffers, one pair per dtype and device
 * ({@link Group}), so that an optimizer step and a gradient all-reduce each touch one buffer instead of one
 * tensor per parameter.
 * <p>
 * Construction copies every parameter into its group's value buffer and then re-points the parameter at a view
 * of it ({@code set_}), and sets its gradient to a view of the group's gradient buffer. Autograd accumulates into
 * those views, so after {@code backward()} the gradient buffer holds exactly what an ordinary module's
 * {@code .grad} tensors would. Writing to a value buffer in place is seen by the module's forward.
 * <p>
 * Gradients must be cleared with {@link #zeroGrad()} (in place): {@code zero_grad(set_to_none=true)} on the
 * module would drop the views and make autograd allocate fresh gradients outside the buffer.
 * <p>
 * Not thread-safe: the training thread owns it. {@link #close()} frees the buffers; the module's parameters then
 * share storage with nothing the module does not itself hold, so close the module first or together.
 */
public final class FlatParameters implements AutoCloseable
{
    private final String[] names;
    private final long[][] shapes;
    private final int[] groupOf;
    private final long[] offsetInGroup;
    private final Group[] groups;
    private final long numel;

    private FlatParameters(final List<String> names, final List<Tensor> parameters)
    {
        final int count = parameters.size();
        this.names = names.toArray(new String[0]);
        this.shapes = new long[count][];
        this.groupOf = new int[count];
        this.offsetInGroup = new long[count];

        final Map<String, List<Integer>> byKind = new LinkedHashMap<>();
        for (int i = 0; i < count; i++)
        {
            final Tensor p = parameters.get(i);
            shapes[i] = shapeOf(p);
            byKind.computeIfAbsent(kindOf(p), k -> new ArrayList<>()).add(i);
        }

        final List<Group> built = new ArrayList<>();
        long total = 0;
        try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
        {
            for (final Map.Entry<String, List<Integer>> kind : byKind.entrySet())
            {
                final Group group = flatten(built.size(), kind.getKey(), kind.getValue(), parameters);
                built.add(group);
                total += group.numel;
            }
        }
        this.groups = built.toArray(new Group[0]);
        this.numel = total;
    }

    /**
     * Flattens a module's parameters (recursively, in {@code named_parameters()} order).
     *
     * @param module the module; its parameters are re-pointed into the new buffers
     * @return the flat view of its parameters
     * @throws IllegalArgumentException if the module has no parameters, or one is not a floating-point tensor
     */
    public static FlatParameters of(final Module module)
    {
        Objects.requireNonNull(module, "module");
        return ofModules(List.of(""), List.of(module));
    }

    /**
     * Flattens several modules' parameters into one set (a twin critic's two nets, say), each module's names
     * prefixed with its own prefix, in the given order.
     *
     * @param prefixes one name prefix per module ({@code "q1."}; {@code ""} for none)
     * @param modules  the modules; their parameters are re-pointed into the new buffers
     * @return the flat view of all their parameters
     * @throws IllegalArgumentException if the lists differ in length, a module has no parameters, a name repeats,
     *                                  or a parameter is not a floating-point tensor
     */
    public static FlatParameters ofModules(final List<String> prefixes, final List<Module> modules)
    {
        Objects.requireNonNull(prefixes, "prefixes");
        Objects.requireNonNull(modules, "modules");
        if (prefixes.size() != modules.size())
        {
            throw new IllegalArgumentException("prefixes: expected one per module, got prefixes=" + prefixes.size()
                + " modules=" + modules.size());
        }
        try (PointerScope scope = new PointerScope())
        {
            final List<String> names = new ArrayList<>();
            final List<Tensor> parameters = new ArrayList<>();
            for (int m = 0; m < modules.size(); m++)
            {
                final StringTensorDict named = Objects.requireNonNull(modules.get(m), "module").named_parameters(true);
                if (0 == named.size())
                {
                    throw new IllegalArgumentException("module " + prefixes.get(m) + ": expected parameters, got none");
                }
                for (long i = 0; i < named.size(); i++)
                {
                    names.add(prefixes.get(m) + named.get(i).key().getString());
                    final Tensor p = named.get(i).value();
                    // The tensors outlive this scope: they are the modules' own parameters.
                    p.retainReference();
                    parameters.add(p);
                }
            }
            try
            {
                return of(names, parameters);
            }
            finally
            {
                for (final Tensor p : parameters)
                {
                    p.releaseReference();
                }
            }
        }
    }

    /**
     * Flattens the given parameters.
     *
     * @param names      one name per parameter (as in a state dict)
     * @param parameters the leaf tensors that autograd fills, in the order their state is exported
     * @return the flat view of those parameters
     * @throws IllegalArgumentException if there are no parameters, the lists differ in length, a name repeats,
     *                                  or a parameter is not a floating-point tensor with elements
     */
    public static FlatParameters of(final List<String> names, final List<Tensor> parameters)
    {
        Objects.requireNonNull(names, "names");
        Objects.requireNonNull(parameters, "parameters");
        if (parameters.isEmpty())
        {
            throw new IllegalArgumentException("parameters: expected at least one tensor, got none");
        }
        if (names.size() != parameters.size())
        {
            throw new IllegalArgumentException(
                "names: expected one per parameter, got names=" + names.size() + " parameters=" + parameters.size());
        }
        if (names.stream().distinct().count() != names.size())
        {
            throw new IllegalArgumentException("names: expected distinct names, got " + names);
        }
        for (int i = 0; i < parameters.size(); i++)
        {
            final Tensor p = parameters.get(i);
            if (null == p || p.isNull() || !p.defined())
            {
                throw new IllegalArgumentException("parameter " + names.get(i) + ": undefined tensor");
            }
            if (!torch.isFloatingType(p.scalar_type()))
            {
                throw new IllegalArgumentException(
                    "parameter " + names.get(i) + ": expected a floating-point tensor, got " + p.scalar_type());
            }
            if (0 == p.numel())
            {
                throw new IllegalArgumentException("parameter " + names.get(i) + ": zero-length tensor");
            }
        }
        return new FlatParameters(names, parameters);
    }

    private static Group flatten(
        final int index, final String kind, final List<Integer> members, final List<Tensor> parameters)
    {
        final TensorVector pieces = new TensorVector();
        long offset = 0;
        final long[] offsets = new long[members.size()];
        for (int k = 0; k < members.size(); k++)
        {
            final Tensor p = parameters.get(members.get(k));
            pieces.push_back(p.detach().reshape(-1));
            offsets[k] = offset;
            offset += p.numel();
        }
        final Tensor values = torch.cat(pieces);
        final Tensor grads = torch.zeros_like(values);
        for (int k = 0; k < members.size(); k++)
        {
            final Tensor p = parameters.get(members.get(k));
            final long n = p.numel();
            final long[] shape = shapeOf(p);
            p.set_(values.narrow(0, offsets[k], n).view(shape));
            p.mutable_grad().put(grads.narrow(0, offsets[k], n).view(shape));
        }
        return new Group(index, kind, values, grads, members.stream().mapToInt(Integer::intValue).toArray(), offsets);
    }

    private static String kindOf(final Tensor p)
    {
        return p.scalar_type() + "@" + p.device().str().getString();
    }

    static long[] shapeOf(final Tensor t)
    {
        final long[] shape = new long[(int)t.dim()];
        for (int d = 0; d < shape.length; d++)
        {
            shape[d] = t.size(d);
        }
        return shape;
    }

    /** @return the number of parameters (tensors) */
    public int size()
    {
        return names.length;
    }

    /** @return the total number of elements over every group */
    public long numel()
    {
        return numel;
    }

    /**
     * @param parameter parameter index, in export order
     * @return its state-dict name
     */
    public String name(final int parameter)
    {
        return names[parameter];
    }

    /** @return the parameter names in export order */
    public List<String> names()
    {
        return Collections.unmodifiableList(Arrays.asList(names));
    }

    /**
     * @param parameter parameter index
     * @return a copy of its shape
     */
    public long[] shape(final int parameter)
    {
        return shapes[parameter].clone();
    }

    /**
     * @param prefix put before each name ({@code "actor."}; {@code ""} for none)
     * @return each parameter's name, prefixed, with its shape, in order: what a state dict of these must hold
     */
    public Map<String, long[]> shapesByName(final String prefix)
    {
        final Map<String, long[]> byName = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++)
        {
            byName.put(prefix + names[i], shapes[i].clone());
        }
        return byName;
    }

    /**
     * @param parameter parameter index
     * @return the group that holds it
     */
    public Group groupOf(final int parameter)
    {
        return groups[groupOf[parameter]];
    }

    /**
     * @param parameter parameter index
     * @return where it starts in its group's buffers, in elements
     */
    public long offset(final int parameter)
    {
        return groups[groupOf[parameter]].offsetOf(parameter);
    }

    /** @return the number of (dtype, device) groups */
    public int groupCount()
    {
        return groups.length;
    }

    /**
     * @param index group index
     * @return that group
     */
    public Group group(final int index)
    {
        return groups[index];
    }

    /**
     * @param parameter parameter index
     * @return a view of its values in the flat buffer, shaped as the parameter (writes go to the model)
     */
    public Tensor view(final int parameter)
    {
        final long[] shape = shapes[parameter];
        long n = 1;
        for (final long d : shape)
        {
            n *= d;
        }
        return groupOf(parameter).values().narrow(0, offset(parameter), n).view(shape);
    }

    /**
     * The parameters as a PyTorch {@code state_dict()}: name to a new tensor holding a copy of the values.
     *
     * @return the names in export order, each with its copy
     */
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            for (int i = 0; i < names.length; i++)
            {
                state.put(names[i], view(i).clone());
            }
        }
        return state;
    }

    /**
     * Copies a state dict's tensors into the parameters by name, like PyTorch's {@code load_state_dict}. With
     * {@code strict}, any missing, unexpected or mismatched key fails the whole load before anything is copied;
     * otherwise the matching keys are loaded and the rest reported. A tensor with a NaN or an infinity is refused,
     * naming it, before anything is copied.
     *
     * @param source name to tensor (values are converted to the parameter's dtype and device)
     * @param strict whether every key must match
     * @return what did not match (empty when strict and it returns)
     * @throws IllegalArgumentException when strict and the keys or shapes differ, listing every difference; or when
     *     a tensor to load has a non-finite value
     */
    public StateDictReport loadStateDict(final Map<?, ?> source, final boolean strict)
    {
        Objects.requireNonNull(source, "source");
        final StateDictReport report = StateDictReport.compare(shapesByName(""), source);
        if (strict && !report.isEmpty())
        {
            throw new IllegalArgumentException("state dict does not match the model (strict load): " + report);
        }
        final List<Integer> loadable = new ArrayList<>();
        for (int i = 0; i < names.length; i++)
        {
            if (StateDictReport.fits(shapes[i], source.get(names[i])))
            {
                loadable.add(i);
            }
        }
        try (PointerScope scope = new PointerScope(); NoGradGuard noGrad = new NoGradGuard())
        {
            // Checked before anything is copied: a net that trained into NaN or infinity would be resumed (and
            // saved again as the best) without a word, and every later update would be NaN too.
            for (final int i : loadable)
            {
                if (!Checks.allFinite((Tensor)source.get(names[i])))
                {
                    throw new IllegalArgumentException("state dict: " + names[i] + " has non-finite values (NaN or "
                        + "infinity); a diverged net is not loaded");
                }
            }
            for (final int i : loadable)
            {
                view(i).copy_((Tensor)source.get(names[i]));
            }
        }
        return report;
    }

    /** @return whether every value is finite (a diverged update leaves NaN or infinity) */
    public boolean allFinite()
    {
        for (final Group group : groups)
        {
            if (!Checks.allFinite(group.values()))
            {
                return false;
            }
        }
        return true;
    }

    /** Zeroes every gradient buffer in place, keeping the views autograd accumulates into. */
    public void zeroGrad()
    {
        final Group[] groups = this.groups;
        for (int i = 0; i < groups.length; i++)
        {
            groups[i].zeroGrad();
        }
    }

    /**
     * The L2 norm of all gradients together, as {@code torch.nn.utils.clip_grad_norm_} computes it (before it
     * scales); accumulated in double.
     *
     * @return the norm; NaN or infinite if a gradient is
     */
    public double gradNorm()
    {
        double sumSquares = 0.0;
        final Group[] groups = this.groups;
        for (int i = 0; i < groups.length; i++)
        {
            sumSquares += groups[i].gradSumSquares();
        }
        return Math.sqrt(sumSquares);
    }

    /** Frees the flat buffers. */
    @Override
    public void close()
    {
        for (final Group group : groups)
        {
            group.close();
        }
    }

    /**
     * The parameters of one dtype and device: a contiguous value buffer and a gradient buffer of the same length.
     * Addresses stay valid until {@link FlatParameters#close()}.
     */
    public static final class Group implements AutoCloseable
    {
        private final int index;
        private final String kind;
        private final Owned<Tensor> values;
        private final Owned<Tensor> grads;
        private final long valuesAddress;
        private final long gradsAddress;
        private final long numel;
        private final long bytes;
        private final boolean isCpuFloat32;
        private final int[] members;
        private final long[] offsets;

        private Group(
            final int index, final String kind, final Tensor values, final Tensor grads, final int[] members,
            final long[] offsets)
        {
            this.index = index;
            this.kind = kind;
            this.values = Owned.own("flat values " + kind, values);
            this.grads = Owned.own("flat grads " + kind, grads);
            this.valuesAddress = values.data_ptr().address();
            this.gradsAddress = grads.data_ptr().address();
            this.numel = values.numel();
            this.bytes = values.nbytes();
            this.isCpuFloat32 = values.is_cpu() && Checks.isFloat32(values);
            this.members = members;
            this.offsets = offsets;
        }

        /** @return this group's index */
        public int index()
        {
            return index;
        }

        /** @return "dtype@device" of this group */
        public String kind()
        {
            return kind;
        }

        /** @return the flat value buffer (owned by this group; do not close) */
        public Tensor values()
        {
            return values.get();
        }

        /** @return the flat gradient buffer (owned by this group; do not close) */
        public Tensor grads()
        {
            return grads.get();
        }

        /** @return the address of the first value */
        public long valuesAddress()
        {
            values.get();
            return valuesAddress;
        }

        /** @return the address of the first gradient */
        public long gradsAddress()
        {
            grads.get();
            return gradsAddress;
        }

        /** @return elements in each buffer */
        public long numel()
        {
            return numel;
        }

        /** @return true if the buffers are CPU float32, the layout the native kernels take */
        public boolean isCpuFloat32()
        {
            return isCpuFloat32;
        }

        /** @return the parameter indices in this group, in buffer order */
        public int[] members()
        {
            return members.clone();
        }

        long offsetOf(final int parameter)
        {
            for (int k = 0; k < members.length; k++)
            {
                if (members[k] == parameter)
                {
                    return offsets[k];
                }
            }
            throw new IllegalArgumentException("parameter=" + parameter + " is not in group " + kind);
        }

        void zeroGrad()
        {
            if (grads.get().is_cpu())
            {
                NativeKernels.fill_zero(gradsAddress, bytes);
            }
            else
            {
                try (PointerScope scope = new PointerScope())
                {
                    grads.get().zero_();
                }
            }
        }

        double gradSumSquares()
        {
            if (isCpuFloat32)
            {
                grads.get();
                return NativeKernels.sum_squares(gradsAddress, numel);
            }
            try (PointerScope scope = new PointerScope())
            {
                final double norm = grads.get().norm().item_double();
                return norm * norm;
            }
        }

        @Override
        public void close()
        {
            values.close();
            grads.close();
        }
    }
}
