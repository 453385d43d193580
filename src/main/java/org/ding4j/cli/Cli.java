package org.ding4j.cli;

import java.io.PrintWriter;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command line's argument parser: commands, options and positional parameters declared in code, parsed without
 * reflection. It replaced picocli, whose classes are Java 5 class files (no class-data archive or AOT cache takes
 * them) and whose model is read from annotations by reflection: that took 0.22-0.24 s of every command's main thread
 * here, most of a run's budget outside training (benchmarks/README.md, "Pendulum against RLtools").
 * <p>
 * Options are {@code --name VALUE} or {@code --name=VALUE}, in any order among the positional parameters; after
 * {@code --} every argument is positional. {@code -h}/{@code --help} prints the command's usage to the output and
 * {@code -V}/{@code --version} the version (exit 0). Bad arguments are named with the rule they break, followed by
 * where to find the usage, on the error stream (exit {@link Main#BAD_INPUT}); so are a command's own
 * {@link IllegalArgumentException}s (a config key, a value out of range), as {@code ding4j: message}; any other
 * exception is exit 1 ({@code -Dding4j.debug.stackTraces=true} adds the stack trace); an {@link Error} goes on to
 * the caller. Not thread-safe.
 */
final class Cli
{
    /** What {@code --version} prints. */
    static final String VERSION = "ding4j 0.1.0";
    private static final List<String> HELP = List.of("-h", "--help");
    /** The usage's width, as picocli's 80 columns and a little more for the long option names. */
    private static final int USAGE_WIDTH = 100;
    private static final List<String> VERSION_OPTIONS = List.of("-V", "--version");

    /** How a command runs once its arguments are parsed and checked. */
    @FunctionalInterface
    interface Action
    {
        /**
         * @param args the parsed arguments, with the streams to print to
         * @return the exit code
         * @throws Exception a failure: {@link IllegalArgumentException} is bad input (exit 2), the rest exit 1
         */
        int run(Args args) throws Exception;
    }

    /** A bad argument, found while parsing or by a command's own check of its arguments: exit 2, with the usage. */
    static final class UsageException extends IllegalArgumentException
    {
        private static final long serialVersionUID = 1L;

        /** @param message names the argument and the rule it breaks */
        UsageException(final String message)
        {
            super(message);
        }
    }

    /** An option taking a value; {@code repeatable} ones collect every value given, in order. */
    private record Option(String name, String label, String help, boolean required, boolean repeatable,
        String defaultValue)
    {
    }

    /** A positional parameter; a {@code variadic} one takes every argument left. */
    private record Positional(String label, String help, boolean required, boolean variadic)
    {
    }

    /** One command: its name, description, options, positional parameters and either an action or subcommands. */
    static final class Command
    {
        private final String name;
        private final String description;
        private final Map<String, Option> options = new LinkedHashMap<>();
        private final List<Positional> positionals = new ArrayList<>();
        private final Map<String, Command> subcommands = new LinkedHashMap<>();
        private Action action;
        /** Whether what it prints is its result (a lost line fails it) rather than progress beside its files. */
        private boolean printsResult = true;

        /**
         * @param name        the word that selects it
         * @param description one line for its usage and its parent's list of commands
         */
        Command(final String name, final String description)
        {
            this.name = name;
            this.description = description;
        }

        /** @return this, with an optional {@code --name LABEL} */
        Command option(final String optionName, final String label, final String help)
        {
            return add(new Option(optionName, label, help, false, false, null));
        }

        /** @return this, with an optional {@code --name LABEL} worth {@code defaultValue} when not given */
        Command option(final String optionName, final String label, final String help, final String defaultValue)
        {
            return add(new Option(optionName, label, help, false, false, defaultValue));
        }

        /** @return this, with a required {@code --name LABEL} */
        Command requiredOption(final String optionName, final String label, final String help)
        {
            return add(new Option(optionName, label, help, true, false, null));
        }

        /** @return this, with a {@code --name LABEL} that may be given any number of times */
        Command repeatableOption(final String optionName, final String label, final String help)
        {
            return add(new Option(optionName, label, help, false, true, null));
        }

        /** @return this, with a positional parameter (given or not) */
        Command optionalParameter(final String label, final String help)
        {
            positionals.add(new Positional(label, help, false, false));
            return this;
        }

        /** @return this, with a positional parameter that must be given */
        Command parameter(final String label, final String help)
        {
            positionals.add(new Positional(label, help, true, false));
            return this;
        }

        /** @return this, with a last positional parameter taking every argument left, any number of them */
        Command optionalParameters(final String label, final String help)
        {
            positionals.add(new Positional(label, help, false, true));
            return this;
        }

        /** @return this, with a last positional parameter taking every argument left, at least one */
        Command parameters(final String label, final String help)
        {
            positionals.add(new Positional(label, help, true, true));
            return this;
        }

        /** @return this, with a subcommand */
        Command subcommand(final Command command)
        {
            subcommands.put(command.name, command);
            return this;
        }

        /** @return this, running {@code run} */
        Command action(final Action run)
        {
            this.action = run;
            return this;
        }

        /**
         * @return this, a command whose output is progress beside its real product (a run's files): output it could
         *     not write is said on stderr, and does not fail it
         */
        Command printsProgress()
        {
            this.printsResult = false;
            return this;
        }

        private Command add(final Option option)
        {
            options.put(option.name(), option);
            return this;
        }
    }

    /** The arguments one command was given, checked against its declaration, and the streams it prints to. */
    static final class Args
    {
        private final String command;
        private final Map<String, Option> declared;
        private final Map<String, List<String>> values;
        private final List<String> positionals;
        private final PrintWriter out;
        private final PrintWriter err;

        private Args(final String command, final Map<String, Option> declared, final Map<String, List<String>> values,
            final List<String> positionals, final PrintWriter out, final PrintWriter err)
        {
            this.command = command;
            this.declared = declared;
            this.values = values;
            this.positionals = positionals;
            this.out = out;
            this.err = err;
        }

        /** @return the option's last value, else its default, else null */
        String value(final String option)
        {
            final List<String> given = values.get(option);
            if (null != given)
            {
                return given.get(given.size() - 1);
            }
            return declaredOption(option).defaultValue();
        }

        /** @return every value given to a repeatable option, in order (empty if none) */
        List<String> values(final String option)
        {
            declaredOption(option);
            return List.copyOf(values.getOrDefault(option, List.of()));
        }

        /** @return the option's value as a path, null if neither given nor defaulted */
        Path path(final String option)
        {
            return toPath("option '" + option + "'", value(option));
        }

        /** @return the option's value as an int, null if neither given nor defaulted */
        Integer integer(final String option)
        {
            final Long value = number(option, Integer.MIN_VALUE, Integer.MAX_VALUE);
            return null == value ? null : value.intValue();
        }

        /** @return the option's value as a long, null if neither given nor defaulted */
        Long longValue(final String option)
        {
            return number(option, Long.MIN_VALUE, Long.MAX_VALUE);
        }

        private Long number(final String option, final long min, final long max)
        {
            final String text = value(option);
            if (null == text)
            {
                return null;
            }
            try
            {
                final long value = Long.parseLong(text.trim());
                if (value >= min && value <= max)
                {
                    return value;
                }
            }
            catch (final NumberFormatException ex)
            {
                // Named below with the range, as one out of it is.
            }
            throw new UsageException("option '" + option + "': expected an integer in [" + min + ", " + max + "], got '"
                + text + "'");
        }

        /** @return the positional arguments, in order */
        List<String> positionals()
        {
            return List.copyOf(positionals);
        }

        /** @return the positional argument at {@code index} as a path, null if not given */
        Path pathAt(final int index)
        {
            return index < positionals.size() ? toPath("argument " + (index + 1), positionals.get(index)) : null;
        }

        /** @return where the command prints its results */
        PrintWriter out()
        {
            return out;
        }

        /** @return where the command prints its reports */
        PrintWriter err()
        {
            return err;
        }

        private Option declaredOption(final String option)
        {
            final Option found = declared.get(option);
            if (null == found)
            {
                throw new IllegalStateException(command + " declares no option " + option);
            }
            return found;
        }

        private static Path toPath(final String what, final String text)
        {
            if (null != text && text.isEmpty())
            {
                // Path.of("") is the working folder, which no option here means.
                throw new UsageException(what + ": expected a path, got an empty value");
            }
            try
            {
                return null == text ? null : Path.of(text);
            }
            catch (final InvalidPathException ex)
            {
                throw new UsageException(what + ": '" + text + "' is not a path (" + ex.getReason() + ")");
            }
        }
    }

    private final Command root;
    private PrintWriter out = writer(System.out, "stdout");
    /** The stream under {@link #out} while it is the default: a PrintStream keeps its write errors to itself. */
    private java.io.PrintStream outStream = System.out;
    private PrintWriter err = writer(System.err, "stderr");
    /** Runs with the command's path once its arguments are checked, just before its action. */
    private java.util.function.Consumer<String> beforeAction = path -> { };

    /**
     * @return a writer in the stream's own encoding ({@code stdout.encoding}, Java 19+; else the default, which the
     *     stream itself uses on Java 17), so that its lines and the stream's other writers' agree
     */
    private static PrintWriter writer(final java.io.PrintStream stream, final String name)
    {
        final String encoding = System.getProperty(name + ".encoding");
        final java.nio.charset.Charset charset = null != encoding && java.nio.charset.Charset.isSupported(encoding)
            ? java.nio.charset.Charset.forName(encoding) : java.nio.charset.Charset.defaultCharset();
        return new PrintWriter(new java.io.OutputStreamWriter(stream, charset), true);
    }

    /** @param root the top command ({@code ding4j}), whose subcommands are the commands */
    Cli(final Command root)
    {
        this.root = root;
    }

    /** @param writer where results and usage asked for go (stdout by default) */
    void setOut(final PrintWriter writer)
    {
        this.out = writer;
        this.outStream = null;
    }

    /** @param writer where errors and usage after a bad argument go (stderr by default) */
    void setErr(final PrintWriter writer)
    {
        this.err = writer;
    }

    /**
     * @param hook runs with the command's path ({@code "ding4j train"}) once its arguments are checked, before it runs
     */
    void beforeAction(final java.util.function.Consumer<String> hook)
    {
        this.beforeAction = hook;
    }

    /**
     * Parses the arguments, runs the command they name and reports its failure, if any.
     *
     * @param args the arguments
     * @return the exit code: the command's, 2 for bad input, 1 for any other failure
     */
    int execute(final String... args)
    {
        Command command = root;
        String path = root.name;
        try
        {
            final Map<String, List<String>> values = new LinkedHashMap<>();
            final List<String> positionals = new ArrayList<>();
            boolean endOfOptions = false;
            for (int i = 0; i < args.length; i++)
            {
                final String arg = args[i];
                if (!endOfOptions)
                {
                    if ("--".equals(arg))
                    {
                        if (!command.subcommands.isEmpty())
                        {
                            throw new UsageException("'--' ends a command's options; a command comes first (commands: "
                                + String.join(", ", command.subcommands.keySet()) + ")");
                        }
                        endOfOptions = true;
                        continue;
                    }
                    if (HELP.contains(arg))
                    {
                        printUsage(command, path, out);
                        return 0;
                    }
                    if (VERSION_OPTIONS.contains(arg))
                    {
                        out.println(VERSION);
                        out.flush();
                        return 0;
                    }
                    if (!command.subcommands.isEmpty())
                    {
                        final Command sub = command.subcommands.get(arg);
                        if (null == sub)
                        {
                            throw new UsageException((arg.startsWith("-") ? "unknown option '" : "unknown command '")
                                + arg + "' (commands: " + String.join(", ", command.subcommands.keySet()) + ")");
                        }
                        command = sub;
                        path = path + " " + sub.name;
                        continue;
                    }
                    if (arg.startsWith("-") && arg.length() > 1)
                    {
                        i = option(command, args, i, values);
                        continue;
                    }
                }
                positionals.add(arg);
            }
            if (null == command.action)
            {
                throw new UsageException("a command is required (commands: "
                    + String.join(", ", command.subcommands.keySet()) + ")");
            }
            check(command, values, positionals);
            final Args parsed = new Args(path, command.options, values, positionals, out, err);
            beforeAction.accept(path);
            final int code = command.action.run(parsed);
            if (out.checkError() || null != outStream && outStream.checkError())
            {
                // A result nobody received (stdout closed, a full disk, a file-size limit) is no success: a script
                // reading it would take a truncated line for the answer. A run's progress lines are not its result.
                err.println(path + ": cannot write its output (standard output is closed, full or over a size "
                    + "limit)" + (command.printsResult ? "" : "; its files are written as the run ended"));
                err.flush();
                return 0 == code && command.printsResult ? 1 : code;
            }
            return code;
        }
        catch (final UsageException ex)
        {
            err.println(path + ": " + ex.getMessage());
            err.println("Usage: " + synopsis(command, path) + " (see '" + path + " --help')");
            err.flush();
            return Main.BAD_INPUT;
        }
        catch (final Exception ex)
        {
            // The message alone: it names the file, key or option at fault, and a stack trace would bury that.
            err.println("ding4j: " + (null == ex.getMessage() ? ex.toString() : ex.getMessage()));
            if (Boolean.getBoolean("ding4j.debug.stackTraces"))
            {
                ex.printStackTrace(err);
            }
            err.flush();
            return ex instanceof IllegalArgumentException ? Main.BAD_INPUT : 1;
        }
    }

    /** Takes one option and its value (the next argument, or after {@code =}); returns the last index used. */
    private static int option(final Command command, final String[] args, final int at,
        final Map<String, List<String>> values)
    {
        final String arg = args[at];
        final int equals = arg.startsWith("--") ? arg.indexOf('=') : -1;
        final String name = equals < 0 ? arg : arg.substring(0, equals);
        final Option option = command.options.get(name);
        if (null == option)
        {
            final boolean runsCommand = !command.positionals.isEmpty()
                && command.positionals.get(command.positionals.size() - 1).variadic();
            throw new UsageException("unknown option '" + name + "'" + (command.options.isEmpty() ? ""
                : " (options: " + String.join(", ", command.options.keySet()) + ")")
                + (runsCommand ? "; the options of the command it runs go after --" : ""));
        }
        int next = at;
        final String value;
        if (equals >= 0)
        {
            value = arg.substring(equals + 1);
        }
        else if (next + 1 < args.length && !takesNoValue(command, args[next + 1]))
        {
            value = args[++next];
        }
        else
        {
            throw new UsageException("option '" + name + "' needs a value (" + option.label() + ")");
        }
        final List<String> given = values.computeIfAbsent(name, k -> new ArrayList<>());
        if (!option.repeatable() && !given.isEmpty())
        {
            throw new UsageException("option '" + name + "' may be given once, got '" + given.get(0) + "' and '"
                + value + "'");
        }
        given.add(value);
        return next;
    }

    /** @return whether an argument is an option (with its value or not), help, version or the end of options */
    private static boolean takesNoValue(final Command command, final String arg)
    {
        final int equals = arg.startsWith("--") ? arg.indexOf('=') : -1;
        return command.options.containsKey(equals < 0 ? arg : arg.substring(0, equals)) || "--".equals(arg)
            || HELP.contains(arg) || VERSION_OPTIONS.contains(arg);
    }

    /** Required options and the number of positional arguments. */
    private static void check(final Command command, final Map<String, List<String>> values,
        final List<String> positionals)
    {
        for (final Option option : command.options.values())
        {
            if (option.required() && !values.containsKey(option.name()))
            {
                throw new UsageException("option '" + option.name() + "' is required (" + option.label() + ")");
            }
        }
        final List<Positional> declared = command.positionals;
        for (int i = positionals.size(); i < declared.size(); i++)
        {
            if (declared.get(i).required())
            {
                throw new UsageException("missing " + declared.get(i).label());
            }
        }
        final boolean variadic = !declared.isEmpty() && declared.get(declared.size() - 1).variadic();
        if (!variadic && positionals.size() > declared.size())
        {
            throw new UsageException("unexpected argument '" + positionals.get(declared.size()) + "'"
                + (declared.isEmpty() ? " (it takes none)" : " (it takes at most " + declared.size() + ")"));
        }
    }

    private static String synopsis(final Command command, final String path)
    {
        final StringBuilder line = new StringBuilder(path).append(" [-h] [-V]");
        for (final Option option : command.options.values())
        {
            final String form = option.name() + "=" + option.label();
            line.append(' ').append(option.required() ? form : "[" + form + "]")
                .append(option.repeatable() ? "..." : "");
        }
        for (final Positional positional : command.positionals)
        {
            line.append(' ').append(positional.required() ? positional.label() : "[" + positional.label() + "]")
                .append(positional.variadic() ? "..." : "");
        }
        if (!command.subcommands.isEmpty())
        {
            line.append(" COMMAND");
        }
        return line.toString();
    }

    private static void printUsage(final Command command, final String path, final PrintWriter to)
    {
        final List<String> usage = wrap("Usage: " + synopsis(command, path), USAGE_WIDTH);
        to.println(usage.get(0));
        for (final String more : usage.subList(1, usage.size()))
        {
            to.println("        " + more);
        }
        wrap(command.description, USAGE_WIDTH).forEach(to::println);
        final List<String[]> rows = new ArrayList<>();
        for (final Positional positional : command.positionals)
        {
            rows.add(new String[] {"      " + positional.label() + (positional.variadic() ? "..." : ""),
                positional.help()});
        }
        for (final Option option : command.options.values())
        {
            rows.add(new String[] {"      " + option.name() + "=" + option.label(), option.help()
                + (null == option.defaultValue() ? "" : " (default: " + option.defaultValue() + ")")});
        }
        rows.add(new String[] {"  -h, --help", "Show this help message and exit."});
        rows.add(new String[] {"  -V, --version", "Print version information and exit."});
        if (!command.subcommands.isEmpty())
        {
            rows.add(new String[] {"Commands:", ""});
            for (final Command sub : command.subcommands.values())
            {
                rows.add(new String[] {"  " + sub.name, sub.description});
            }
        }
        int width = 0;
        for (final String[] row : rows)
        {
            width = Math.max(width, row[0].length());
        }
        final int column = width + 2;
        for (final String[] row : rows)
        {
            final List<String> lines = wrap(row[1], Math.max(40, USAGE_WIDTH - column));
            to.println(lines.isEmpty() ? row[0] : String.format("%-" + column + "s%s", row[0], lines.get(0)));
            for (final String more : lines.subList(Math.min(1, lines.size()), lines.size()))
            {
                to.println(" ".repeat(column) + more);
            }
        }
        to.flush();
    }

    /** @return the text in lines of at most {@code width} characters, broken between words (a longer word alone) */
    private static List<String> wrap(final String text, final int width)
    {
        final List<String> lines = new ArrayList<>();
        final StringBuilder line = new StringBuilder();
        for (final String word : text.split(" "))
        {
            if (line.length() > 0 && line.length() + 1 + word.length() > width)
            {
                lines.add(line.toString());
                line.setLength(0);
            }
            line.append(line.length() > 0 ? " " : "").append(word);
        }
        if (line.length() > 0)
        {
            lines.add(line.toString());
        }
        return lines;
    }
}
