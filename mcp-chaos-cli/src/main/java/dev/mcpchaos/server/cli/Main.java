package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.logging.StderrLoggingProvider;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/** The {@code mcp-chaos} command line. */
@Command(name = "mcp-chaos",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "A chaos proxy for MCP (Model Context Protocol) traffic: it sits between an MCP client "
                + "and server and breaks single JSON-RPC messages on purpose, reproducibly.")
public final class Main implements Runnable {

    /**
     * The subcommands, by the name each one's {@code @Command} gives. Each is made only when needed:
     * picocli builds a command's model by reflection, and building all of them cost a stdio proxy
     * about 0.1 s of start-up, in front of every MCP client's first message. The table itself is
     * made on first use too (a class of its own, not {@code Main}'s initialization): a command line
     * {@link FastStart} takes never needs it, and linking its thirteen constructor references, each
     * loading its command's class, came before a stdio proxy's server was started.
     */
    static final class Subcommands {
        static final Map<String, Supplier<Object>> ALL = subcommands();

        private Subcommands() {
        }
    }

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> commands = new LinkedHashMap<>();
        commands.put("stdio", StdioCommand::new);
        commands.put("http", HttpCommand::new);
        commands.put("demo", DemoCommand::new);
        commands.put("demo-server", DemoServerCommand::new);
        commands.put("validate", ValidateCommand::new);
        commands.put("rules", RulesCommand::new);
        commands.put("journal", JournalCommand::new);
        commands.put("replay", ReplayCommand::new);
        commands.put("import", ImportCommand::new);
        commands.put("check", CheckCommand::new);
        commands.put("diff", DiffCommand::new);
        commands.put("report", ReportCommand::new);
        commands.put("drill", DrillCommand::new);
        return commands;
    }

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        // Before anything logs: the stderr set-up without logback's search for a configuration.
        StderrLoggingProvider.install();
        StartUp startUp = StartUp.begin(args);
        if (args.length >= 1 && args.length <= 2 && args[0].equals("demo-server")
                && (args.length == 1 || args[1].equals("--dual-era"))) {
            // Nothing to parse but the one flag the drill passes: picocli's model of the command (its
            // reflection, a third of a cold demo server's time to its first answer) would be built only
            // to call it. A test that spawns the demo server per test pays that on every spawn.
            // (StartUp warms nothing up for it: the demo server logs through no logger and parses
            // with jackson-core alone.)
            System.exit(DemoServerCommand.serveStdio(args.length == 2));
        }
        // A plain stdio or replay command line is filled without picocli, whose start-up was a
        // quarter of a fixture's time to its first answer; anything else goes to picocli as before.
        Callable<Integer> plain = FastStart.parse(args, System.getenv());
        if (plain != null) {
            startUp.awaitLogging();
            System.exit(FastStart.run(plain));
        }
        CommandLine cli = commandLine(args); // picocli's reflection, while logging is set up beside it
        startUp.awaitLogging();
        System.exit(execute(cli, args));
    }

    /** Runs the command line and returns its exit code (for tests and embedding). */
    public static int run(String... args) {
        return execute(commandLine(args), args);
    }

    /**
     * Runs the command line with picocli's output and errors written to {@code out} and {@code err}
     * instead of this process's stdout and stderr, and returns its exit code. Commands that print
     * through picocli ({@code rules}, usage and help) honour them.
     */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = commandLine(args);
        cli.setOut(Objects.requireNonNull(out, "out"));
        cli.setErr(Objects.requireNonNull(err, "err"));
        return execute(cli, args);
    }

    /**
     * The command line for {@code args}: with only the subcommand {@code args[0]} names when it
     * names one, else with all of them (for the usage, {@code help}, and picocli's "did you mean").
     */
    static CommandLine commandLine(String... args) {
        return commandLine(System.getenv(), args);
    }

    /** {@link #commandLine(String...)}, with the options of http and stdio taken from {@code env} too. */
    static CommandLine commandLine(Map<String, String> env, String... args) {
        CommandLine cli = new CommandLine(new Main());
        Supplier<Object> named = args.length > 0 ? Subcommands.ALL.get(args[0]) : null;
        if (named != null) {
            cli.addSubcommand(named.get());
        } else {
            Subcommands.ALL.values().forEach(command -> cli.addSubcommand(command.get()));
            cli.addSubcommand(new CommandLine.HelpCommand());
        }
        // After the subcommands: picocli hands the provider to those there now.
        cli.setDefaultValueProvider(new EnvironmentDefaults(env));
        return cli;
    }

    static int execute(CommandLine cli, String... args) {
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("mcp-chaos: " + environment(cli).explain(e.getMessage(), parseResult));
            return OptionValueException.exitCodeOf(e);
        });
        CommandLine.IParameterExceptionHandler usage = cli.getParameterExceptionHandler();
        cli.setParameterExceptionHandler((e, arguments) -> {
            String variable = fromEnvironment(cli, e);
            if (variable == null) {
                return usage.handleParseException(e, arguments);
            }
            // The value is not on the command line: the usage would not help, the variable's name does.
            e.getCommandLine().getErr().println("mcp-chaos: " + variable + ": " + e.getMessage()
                    + " (from the environment; fix or unset " + variable + ", or give "
                    + ((CommandLine.Model.OptionSpec) e.getArgSpec()).longestName() + " on the command line)");
            return OptionValueException.EXIT_CODE;
        });
        return cli.execute(args);
    }

    private static EnvironmentDefaults environment(CommandLine cli) {
        return (EnvironmentDefaults) cli.getDefaultValueProvider();
    }

    /** The variable that gave the value a parse error is about, or null when it is not about one. */
    private static String fromEnvironment(CommandLine cli, CommandLine.ParameterException e) {
        if (!(e.getArgSpec() instanceof CommandLine.Model.OptionSpec option)
                || environment(cli).defaultValue(option) == null) {
            return null;
        }
        CommandLine.ParseResult parsed = e.getCommandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption(option)) {
            return null;
        }
        return EnvironmentDefaults.variableOf(option);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is needed: " + String.join(", ", Subcommands.ALL.keySet()));
    }

    /** The version from the build. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"mcp-chaos " + version()};
        }
    }

    /** This build's version, such as {@code 0.1.0-SNAPSHOT}. */
    public static String version() {
        Properties properties = new Properties();
        try (InputStream in = Main.class.getResourceAsStream("/dev/mcpchaos/server/version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException ignored) {
            // fall through to "unknown"
        }
        return properties.getProperty("version", "unknown");
    }
}
