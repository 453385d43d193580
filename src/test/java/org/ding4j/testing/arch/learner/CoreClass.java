package org.ding4j.testing.arch.learner;

import org.ding4j.testing.arch.rl.AlgorithmClass;

/** ArchitectureTest's fixture: a "core" class that imports the algorithm layer, which the layer rule must refuse. */
public final class CoreClass
{
    /** @return the algorithm class's name, through the forbidden import */
    public String name()
    {
        return new AlgorithmClass().toString();
    }
}
