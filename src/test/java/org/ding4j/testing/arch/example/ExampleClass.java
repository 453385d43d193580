package org.ding4j.testing.arch.example;

/** ArchitectureTest's fixture: the example layer that a core class must not import. */
public final class ExampleClass
{
}
