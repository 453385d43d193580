package org.ding4j.testing.arch.learner;

import org.ding4j.testing.arch.example.ExampleClass;

/** ArchitectureTest's fixture: a "core" class that imports the example layer, which the layer rule must refuse. */
public final class CoreClass
{
    /** @return the example's name, through the forbidden import */
    public String name()
    {
        return new ExampleClass().toString();
    }
}
