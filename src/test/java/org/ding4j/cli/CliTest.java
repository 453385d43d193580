package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** The command line's parser: what it takes, what it refuses (exit 2, naming the argument), and its exit codes. */
class CliTest
{
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final AtomicReference<Cli.Args> seen = new AtomicReference<>();
    private final List<String> started = new ArrayList<>();

    private int run(final String... args)
    {
        final Cli cli = new Cli(new Cli.Command("tool", "A tool.")
            .subcommand(new Cli.Command("run", "Runs.")
                .optionalParameter("CONFIG", "a config")
                .requiredOption("--ckpt", "FILE", "a file")
                .option("--episodes", "N", "episodes", "100")
                .option("--seed", "N", "a seed")
                .repeatableOption("--set", "KEY=VALUE", "an override")
                .action(parsed -> {
                    seen.set(parsed);
                    parsed.integer("--episodes");
                    parsed.path("--ckpt");
                    if ("fail".equals(parsed.value("--ckpt")))
                    {
                        throw new IllegalStateException("it broke");
                    }
                    if ("bad".equals(parsed.value("--ckpt")))
                    {
                        throw new IllegalArgumentException("key x: expected y");
                    }
                    return 0;
                }))
            .subcommand(new Cli.Command("launch", "Launches.")
                .option("--nproc", "N", "ranks")
                .parameters("COMMAND", "the command")
                .action(parsed -> {
                    seen.set(parsed);
                    return 0;
                })));
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        cli.beforeAction(started::add);
        return cli.execute(args);
    }

    @Test
    void takesOptionsInEitherFormAndAnyOrder()
    {
        assertEquals(0, run("run", "--set", "a=1", "cfg.yaml", "--ckpt=m.pth", "--set=b=--2", "--seed", "-7"),
            err.toString());
        final Cli.Args args = seen.get();
        assertEquals(Path.of("m.pth"), args.path("--ckpt"));
        assertEquals(List.of("a=1", "b=--2"), args.values("--set"));
        assertEquals(-7L, args.longValue("--seed"));
        assertEquals(100, args.integer("--episodes"), "the default");
        assertEquals(Path.of("cfg.yaml"), args.pathAt(0));
        assertNull(args.pathAt(1));
    }

    @Test
    void everyArgumentAfterTheSeparatorIsPositional()
    {
        assertEquals(0, run("launch", "--nproc", "2", "--", "train", "--set", "x=1", "--help"), err.toString());
        assertEquals(List.of("train", "--set", "x=1", "--help"), seen.get().positionals());
        assertEquals(2, seen.get().integer("--nproc"));
    }

    @Test
    void badArgumentsAreNamedWithTheirRuleAndExitTwo()
    {
        assertRefused("tool run: unknown option '--foo' (options: --ckpt, --episodes, --seed, --set)",
            "run", "--ckpt", "m", "--foo");
        assertRefused("tool run: option '--ckpt' is required (FILE)", "run");
        // Path.of("") would be the working folder.
        assertRefused("tool run: option '--ckpt': expected a path, got an empty value", "run", "--ckpt=");
        assertRefused("tool run: option '--seed' needs a value (N)", "run", "--ckpt", "m", "--seed");
        assertRefused("tool run: option '--ckpt' needs a value (FILE)", "run", "--ckpt", "--seed", "1");
        assertRefused("tool run: option '--seed' may be given once, got '1' and '2'",
            "run", "--ckpt", "m", "--seed", "1", "--seed=2");
        assertRefused("tool run: unexpected argument 'b.yaml' (it takes at most 1)",
            "run", "--ckpt", "m", "a", "b.yaml");
        assertRefused("tool run: option '--episodes': expected an integer in [-2147483648, 2147483647], got 'ten'",
            "run", "--ckpt", "m", "--episodes", "ten");
        assertRefused("tool run: option '--episodes': expected an integer in [-2147483648, 2147483647], got "
            + "'99999999999'", "run", "--ckpt", "m", "--episodes", "99999999999");
        assertRefused("tool run: option '--ckpt' needs a value (FILE)", "run", "--ckpt", "--", "x");
        assertRefused("tool run: option '--seed' needs a value (N)", "run", "--ckpt", "m", "--seed", "-h");
        assertRefused("tool run: option '--ckpt' needs a value (FILE)", "run", "--ckpt", "--seed=3");
        assertRefused("tool launch: unknown option '--set' (options: --nproc); the options of the command it runs go "
            + "after --", "launch", "--nproc", "1", "train", "--set", "x=1");
        assertRefused("tool launch: missing COMMAND", "launch", "--nproc", "2");
        assertRefused("tool: unknown command 'walk' (commands: run, launch)", "walk");
        assertRefused("tool: a command is required (commands: run, launch)");
        assertRefused("tool: '--' ends a command's options; a command comes first (commands: run, launch)",
            "--", "run");
    }

    @Test
    void aCommandsFailureIsItsMessageWithTheExitCodeOfItsKind()
    {
        assertEquals(2, run("run", "--ckpt", "bad"));
        assertEquals("ding4j: key x: expected y", err.toString().strip());
        err.getBuffer().setLength(0);
        assertEquals(1, run("run", "--ckpt", "fail"));
        assertEquals("ding4j: it broke", err.toString().strip());
    }

    @Test
    void helpAndVersionPrintToTheOutputAndExitZero()
    {
        assertEquals(0, run("run", "--help"));
        assertTrue(out.toString().startsWith("Usage: tool run [-h] [-V] --ckpt=FILE [--episodes=N] [--seed=N] "
            + "[--set=KEY=VALUE]... [CONFIG]\nRuns.\n"), out.toString());
        assertTrue(out.toString().contains("--episodes=N     episodes (default: 100)\n"), out.toString());
        assertNull(seen.get(), "help runs nothing");
        out.getBuffer().setLength(0);
        assertEquals(0, run("-V"));
        assertEquals(Cli.VERSION, out.toString().strip());
        assertEquals("", err.toString());
    }

    /** @return stdout closed or full: every write fails */
    private static PrintWriter failingOut()
    {
        return new PrintWriter(new java.io.OutputStream()
        {
            @Override
            public void write(final int b) throws java.io.IOException
            {
                throw new java.io.IOException("No space left on device");
            }
        });
    }

    @Test
    void anOutputNobodyReceivedIsAFailure()
    {
        final Cli cli = new Cli(new Cli.Command("tool", "A tool.").subcommand(new Cli.Command("say", "Says.")
            .action(parsed -> {
                parsed.out().println("the answer");
                return 0;
            })));
        cli.setOut(failingOut());
        cli.setErr(new PrintWriter(err));
        assertEquals(1, cli.execute("say"));
        assertTrue(err.toString().startsWith("tool say: cannot write its output"), err.toString());
    }

    @Test
    void aRunsLostProgressLinesAreSaidButDoNotFailIt()
    {
        final Cli cli = new Cli(new Cli.Command("tool", "A tool.").subcommand(new Cli.Command("train", "Trains.")
            .printsProgress()
            .action(parsed -> {
                parsed.out().println("update 100");
                return 0;
            })));
        cli.setOut(failingOut());
        cli.setErr(new PrintWriter(err));
        assertEquals(0, cli.execute("train"), "its files are its result");
        assertTrue(err.toString().startsWith("tool train: cannot write its output"), err.toString());
    }

    @Test
    void aCommandStartsOnlyOnceItsArgumentsAreChecked()
    {
        // `ding4j train` says "starting" from this hook: a bad argument or --help must be all such a run prints.
        assertEquals(2, run("run", "--ckpt", "m.pth", "--bogus"));
        assertEquals(0, run("run", "--ckpt", "m.pth", "-h"));
        assertEquals(2, run("run"));
        assertEquals(List.of(), started);
        assertEquals(0, run("launch", "--nproc", "1", "--", "train", "--help"));
        assertEquals(0, run("run", "--ckpt", "m.pth"));
        assertEquals(List.of("tool launch", "tool run"), started);
    }

    private void assertRefused(final String message, final String... args)
    {
        err.getBuffer().setLength(0);
        assertEquals(2, run(args), String.join(" ", args));
        final String[] lines = err.toString().split("\n");
        assertEquals(message, lines[0]);
        assertTrue(lines[1].startsWith("Usage: tool"), err.toString());
    }
}
