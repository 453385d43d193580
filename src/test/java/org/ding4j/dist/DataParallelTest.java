package org.ding4j.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.LinearImpl;
import org.bytedeco.pytorch.Module;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.testing.ChildJvm;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link DataParallel} on a real Gloo group of one rank (the Reducer's hooks, buckets and checks run as with more):
 * a module with a parameter the loss does not use fails its step naming the cause, and trains with
 * {@code findUnusedParameters}; a 0 cap is one bucket; a step whose backward bypassed it is refused, and once closed
 * the optimizer steps alone; modules that are not the
 * optimizer's are refused by what differs.
 */
@Tag("native")
class DataParallelTest
{
    @BeforeAll
    static void threads()
    {
        Threads.configure();
    }

    /** Two Linear layers of which the forward uses only the first. */
    private static Module twoLayers(final LinearImpl used, final LinearImpl unused)
    {
        final Module module = new Module();
        module.register_module("used", used);
        module.register_module("unused", unused);
        return module;
    }

    @Test
    void aParameterWithoutAGradientShouldFailTheStepUnlessTheSearchIsOn() throws Exception
    {
        for (final boolean search : new boolean[] {false, true})
        {
            torch.manual_seed(0);
            final LinearImpl used = new LinearImpl(4, 2);
            final LinearImpl unused = new LinearImpl(4, 2);
            final Module module = twoLayers(used, unused);
            try (DistGroup group = DistGroup.join(new DistInfo(0, 1, 0, "127.0.0.1", ChildJvm.freePort()),
                Duration.ofSeconds(30));
                FlatParameters params = FlatParameters.of(module);
                FusedAdam adam = new FusedAdam(params, AdamConfig.adam(1e-2));
                DataParallel dp = DataParallel.attach(group, adam, List.of(module),
                    new DataParallel.Options(0, search, false)))
            {
                for (int step = 0; step < 3; step++)
                {
                    try (PointerScope scope = new PointerScope())
                    {
                        params.zeroGrad();
                        adam.backward(used.forward(torch.ones(3, 4)).sum());
                        if (search)
                        {
                            adam.step();
                            continue;
                        }
                        final DistException ex = assertThrows(DistException.class, adam::step);
                        assertTrue(ex.getMessage().startsWith("allreduce gradients failed on rank 0 of 1: the backward "
                            + "did not reduce every bucket: parameter(s) unused.weight, unused.bias got no gradient"),
                            ex.getMessage());
                        break;
                    }
                }
                assertEquals(search ? 3 : 0, dp.reductions(), "steps reduced with the search " + search);
                assertEquals(1, dp.bucketCount(), "a 0 cap is one bucket for everything");
            }
        }
    }

    /** A parameter that requires no gradient is refused by name: c10d's Reducer crashed the JVM reading its own. */
    @Test
    void aFrozenParameterShouldBeRefusedNamingIt() throws Exception
    {
        final Module module = new Module();
        module.register_module("fc", new LinearImpl(4, 2));
        module.register_parameter("frozen", torch.ones(3), false);
        try (DistGroup group = DistGroup.join(new DistInfo(0, 1, 0, "127.0.0.1", ChildJvm.freePort()),
            Duration.ofSeconds(30));
            FlatParameters params = FlatParameters.of(module);
            FusedAdam adam = new FusedAdam(params, AdamConfig.adam(1e-2)))
        {
            assertEquals("modules: parameter 0 (frozen) does not require a gradient; DataParallel averages every "
                + "parameter's: keep a frozen tensor out of the optimizer's parameters (a buffer, say)",
                assertThrows(IllegalArgumentException.class, () -> DataParallel.attach(group, adam, List.of(module),
                    DataParallel.Options.defaults())).getMessage());
        }
    }

    @Test
    void aStepWhoseBackwardBypassedItAndForeignModulesShouldBeRefused() throws Exception
    {
        torch.manual_seed(0);
        final LinearImpl layer = new LinearImpl(4, 2);
        final LinearImpl other = new LinearImpl(4, 3);
        try (DistGroup group = DistGroup.join(new DistInfo(0, 1, 0, "127.0.0.1", ChildJvm.freePort()),
            Duration.ofSeconds(30));
            FlatParameters params = FlatParameters.of(layer);
            FusedAdam adam = new FusedAdam(params, AdamConfig.adam(1e-2)))
        {
            final IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                () -> DataParallel.attach(group, adam, List.of(layer, other), DataParallel.Options.defaults()));
            assertEquals("modules: expected the optimizer's 2 parameters (10 floats), got 4 (25 floats)",
                foreign.getMessage());
            try (DataParallel dp = DataParallel.attach(group, adam, List.of(layer), DataParallel.Options.defaults());
                PointerScope scope = new PointerScope())
            {
                params.zeroGrad();
                layer.forward(torch.ones(3, 4)).sum().backward();
                final IllegalStateException ex = assertThrows(IllegalStateException.class, adam::step);
                assertEquals("DataParallel: a step whose backward did not run through it (call optimizer.backward(loss) "
                    + "or DataParallel.backward(loss)): the gradients were not averaged", ex.getMessage());
            }
            // Closed, it leaves the optimizer to step alone.
            try (PointerScope scope = new PointerScope())
            {
                params.zeroGrad();
                adam.backward(layer.forward(torch.ones(3, 4)).sum());
                adam.step();
            }
        }
    }
}
