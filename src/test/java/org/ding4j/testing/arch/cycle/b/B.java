package org.ding4j.testing.arch.cycle.b;

import org.ding4j.testing.arch.cycle.a.A;

/** ArchitectureTest's fixture: the other half of the package cycle. */
public final class B
{
    /** @return the first half */
    public A other()
    {
        return null;
    }
}
