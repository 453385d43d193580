package org.ding4j.testing.arch.rl;

/** ArchitectureTest's fixture: the algorithm layer that a core class must not import. */
public final class AlgorithmClass
{
}
