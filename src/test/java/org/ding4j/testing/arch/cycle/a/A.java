package org.ding4j.testing.arch.cycle.a;

import org.ding4j.testing.arch.cycle.b.B;

/** ArchitectureTest's fixture: one half of a package cycle, which the cycle rule must refuse. */
public final class A
{
    /** @return the other half */
    public B other()
    {
        return new B();
    }
}
