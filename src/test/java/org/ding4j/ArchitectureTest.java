package org.ding4j;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The library's layers, checked on the compiled classes: the core (config, checkpoint, torch, log, data, policy,
 * hook, dist, learner, internal) imports neither the algorithms and their pipeline ({@code org.ding4j.rl..}) nor the
 * command line ({@code org.ding4j.cli..}); the algorithms do not import the command line; the
 * JMX and Micrometer integrations stay out of the core, only the latter sees Micrometer, the JFR events see nothing
 * of ding4j's; no package depends on another in a cycle; and library code outside the CLI takes nothing of the host
 * process's (properties, shutdown hooks, exit, signals). The same rules are run on a fixture with a core -> rl
 * import, a package cycle and a greedy guest, where they must fail, so a rule that stopped seeing violations would
 * fail this test too.
 */
class ArchitectureTest
{
    private static final JavaClasses LIBRARY = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("org.ding4j");

    private static final JavaClasses FIXTURE = new ClassFileImporter().importPackages("org.ding4j.testing.arch");

    /** Core classes (all under {@code root} but the algorithms and the CLI) must not reach up into those two. */
    static ArchRule coreImportsNeitherAlgorithmsNorCli(final String root)
    {
        return noClasses().that().resideInAPackage(root + "..")
            .and().resideOutsideOfPackages(root + ".rl..", root + ".cli..")
            .should().dependOnClassesThat().resideInAnyPackage(root + ".rl..", root + ".cli..")
            .because("the core is what applications link; the algorithms and the CLI sit on top of it");
    }

    /**
     * Library code (all under {@code root} but the CLI, which is the application) takes nothing that belongs to the
     * host process: no JVM-wide system property, no shutdown hook, no exit or halt of the JVM, and no signal handler
     * but the one an application asks for ({@code StopSignals.installForProcess()}).
     */
    static ArchRule takesNothingFromTheHost(final String root)
    {
        return noClasses().that().resideInAPackage(root + "..")
            .and().resideOutsideOfPackage(root + ".cli..")
            .and().doNotHaveFullyQualifiedName(root + ".learner.StopSignals")
            .should().callMethod(System.class, "setProperty", String.class, String.class)
            .orShould().callMethod(Runtime.class, "addShutdownHook", Thread.class)
            .orShould().callMethod(Runtime.class, "halt", int.class)
            .orShould().callMethod(System.class, "exit", int.class)
            .orShould().callMethod(sun.misc.Signal.class, "handle", sun.misc.Signal.class, sun.misc.SignalHandler.class)
            .because("ding4j is linked into services that own their process (signals, exit, hooks, properties)");
    }

    /**
     * Every thread library code starts comes from {@code Threads.newThread} (the application's factory when it set
     * one): no {@code new Thread} anywhere else outside the CLI.
     */
    static ArchRule threadsOnlyFromTheFactory(final String root)
    {
        return noClasses().that().resideInAPackage(root + "..")
            .and().resideOutsideOfPackage(root + ".cli..")
            .and().doNotHaveFullyQualifiedName(root + ".torch.Threads")
            .should().callConstructor(Thread.class, Runnable.class)
            .orShould().callConstructor(Thread.class, Runnable.class, String.class)
            .orShould().callConstructor(Thread.class, String.class)
            .because("an embedder names, pins and accounts for threads through the factory it passes");
    }

    /** Every package is a slice; no two slices may depend on each other in a cycle. */
    static ArchRule noPackageCycles(final String root)
    {
        return slices().matching(root + ".(**)").should().beFreeOfCycles();
    }

    @Test
    void coreShouldImportNeitherTheAlgorithmsNorTheCli()
    {
        coreImportsNeitherAlgorithmsNorCli("org.ding4j").check(LIBRARY);
    }

    @Test
    void theAlgorithmsShouldNotImportTheCli()
    {
        noClasses().that().resideInAPackage("org.ding4j.rl..")
            .should().dependOnClassesThat().resideInAPackage("org.ding4j.cli..")
            .check(LIBRARY);
    }

    @Test
    void theIntegrationsShouldStayOutOfTheCore()
    {
        // JMX and Micrometer sit on top of the learner; Micrometer is optional, so only its binder may see it.
        noClasses().that().resideInAPackage("org.ding4j..")
            .and().resideOutsideOfPackages("org.ding4j.jmx..", "org.ding4j.micrometer..", "org.ding4j.rl..",
                "org.ding4j.cli..")
            .should().dependOnClassesThat().resideInAnyPackage("org.ding4j.jmx..", "org.ding4j.micrometer..")
            .check(LIBRARY);
        noClasses().that().resideOutsideOfPackage("org.ding4j.micrometer..")
            .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
            .check(LIBRARY);
        // protobuf-java is not a dependency: a host on another protobuf version would clash (tests decode with it).
        noClasses().should().dependOnClassesThat().resideInAPackage("com.google.protobuf..").check(LIBRARY);
        // Every layer emits JFR events, so the events depend on nothing of ding4j's.
        noClasses().that().resideInAPackage("org.ding4j.jfr..")
            .should().dependOnClassesThat().resideOutsideOfPackages("org.ding4j.jfr..", "java..", "jdk.jfr..")
            .check(LIBRARY);
    }

    @Test
    void libraryCodeShouldTakeNothingFromTheHostProcess()
    {
        takesNothingFromTheHost("org.ding4j").check(LIBRARY);
    }

    @Test
    void libraryThreadsShouldComeFromTheFactory()
    {
        threadsOnlyFromTheFactory("org.ding4j").check(LIBRARY);
    }

    @Test
    void noPackageShouldBeInACycle()
    {
        noPackageCycles("org.ding4j").check(LIBRARY);
    }

    @Test
    void theRulesShouldFailOnALayerViolationACycleAndAGreedyGuest()
    {
        final AssertionError layer = assertThrows(AssertionError.class,
            () -> coreImportsNeitherAlgorithmsNorCli("org.ding4j.testing.arch").check(FIXTURE));
        assertTrue(layer.getMessage().contains("CoreClass"), layer.getMessage());
        final AssertionError cycle = assertThrows(AssertionError.class,
            () -> noPackageCycles("org.ding4j.testing.arch").check(FIXTURE));
        assertTrue(cycle.getMessage().contains("Cycle detected"), cycle.getMessage());
        final AssertionError host = assertThrows(AssertionError.class,
            () -> takesNothingFromTheHost("org.ding4j.testing.arch").check(FIXTURE));
        for (final String call : new String[] {"System.setProperty", "Runtime.addShutdownHook", "Signal.handle",
            "Runtime.halt", "System.exit"})
        {
            assertTrue(host.getMessage().contains(call), call + ": " + host.getMessage());
        }
        final AssertionError thread = assertThrows(AssertionError.class,
            () -> threadsOnlyFromTheFactory("org.ding4j.testing.arch").check(FIXTURE));
        assertTrue(thread.getMessage().contains("Thread.<init>"), thread.getMessage());
    }
}
