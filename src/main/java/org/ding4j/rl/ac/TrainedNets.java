package org.ding4j.rl.ac;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.ding4j.torch.Activation;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.Mlp;

/**
 * One or more MLPs of the same widths trained by one Adam over one flat buffer (an actor; a twin critic's two
 * nets), with an optional target copy that Polyak averaging moves toward them. The nets are built from libtorch's
 * global generator (seed it first); the targets start as exact copies.
 */
final class TrainedNets implements AutoCloseable
{
    private final Mlp[] nets;
    private final Mlp[] targets;
    private final FlatParameters params;
    private final FlatParameters targetParams;
    private final FusedAdam optimizer;

    /**
     * @param prefixes   one state-dict prefix per net ({@code ""} for a single net)
     * @param sizes      the widths of each net, input to output
     * @param activation between the layers
     * @param lr         Adam's learning rate
     * @param withTarget whether to keep target copies
     */
    TrainedNets(final List<String> prefixes, final long[] sizes, final Activation activation, final double lr,
        final boolean withTarget)
    {
        nets = build(prefixes.size(), sizes, activation);
        params = FlatParameters.ofModules(prefixes, modules(nets));
        if (withTarget)
        {
            targets = build(prefixes.size(), sizes, activation);
            targetParams = FlatParameters.ofModules(prefixes, modules(targets));
            syncTargets();
        }
        else
        {
            targets = null;
            targetParams = null;
        }
        optimizer = new FusedAdam(params, AdamConfig.adam(lr));
    }

    private static Mlp[] build(final int count, final long[] sizes, final Activation activation)
    {
        final Mlp[] built = new Mlp[count];
        for (int i = 0; i < count; i++)
        {
            built[i] = Mlp.of(activation, sizes);
        }
        return built;
    }

    private static List<Module> modules(final Mlp[] nets)
    {
        final List<Module> modules = new ArrayList<>(nets.length);
        for (final Mlp net : nets)
        {
            modules.add(net.module());
        }
        return modules;
    }

    /** Sets every target to its net (a load without targets, and the start). */
    void syncTargets()
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            targetParams.group(0).values().copy_(params.group(0).values());
        }
    }

    /** {@code target = (1 - tau) target + tau net}, over the whole flat buffer in one op. */
    void polyak(final Scalar tau)
    {
        try (NoGradGuard noGrad = new NoGradGuard())
        {
            targetParams.group(0).values().lerp_(params.group(0).values(), tau);
        }
    }

    Mlp net(final int i)
    {
        return nets[i];
    }

    Mlp target(final int i)
    {
        return targets[i];
    }

    FlatParameters params()
    {
        return params;
    }

    FlatParameters targetParams()
    {
        return targetParams;
    }

    FusedAdam optimizer()
    {
        return optimizer;
    }

    /** Puts the nets' (and the targets') tensors into DI-engine's {@code model} / {@code target_model} dicts. */
    void exportTo(final String prefix, final Map<String, Object> model, final Map<String, Object> targetModel)
    {
        params.stateDict().forEach((k, v) -> model.put(prefix + k, v));
        if (null != targetParams)
        {
            targetParams.stateDict().forEach((k, v) -> targetModel.put(prefix + k, v));
        }
    }

    /** @return the keys {@link #exportTo} writes into the model section under {@code prefix}, with their shapes */
    Map<String, long[]> modelShapes(final String prefix)
    {
        return params.shapesByName(prefix);
    }

    /** Loads the online net's entries under {@code prefix} of a model dict alone, strictly (acting needs no more). */
    void importParams(final String prefix, final Map<?, ?> model)
    {
        params.loadStateDict(section(prefix, model), true);
    }

    /** Loads the entries under {@code prefix} of the two dicts, strictly (every tensor, the right shapes). */
    void importFrom(final String prefix, final Map<?, ?> model, final Map<?, ?> targetModel)
    {
        params.loadStateDict(section(prefix, model), true);
        if (null != targetParams)
        {
            targetParams.loadStateDict(section(prefix, targetModel), true);
        }
    }

    private static Map<String, Object> section(final String prefix, final Map<?, ?> dict)
    {
        final Map<String, Object> part = new LinkedHashMap<>();
        dict.forEach((k, v) -> {
            if (k instanceof String key && key.startsWith(prefix))
            {
                part.put(key.substring(prefix.length()), v);
            }
        });
        return part;
    }

    /** Frees the optimizer, the flat buffers and the nets. */
    @Override
    public void close()
    {
        optimizer.close();
        params.close();
        if (null != targetParams)
        {
            targetParams.close();
        }
        for (final Mlp net : nets)
        {
            net.close();
        }
        if (null != targets)
        {
            for (final Mlp net : targets)
            {
                net.close();
            }
        }
    }
}
