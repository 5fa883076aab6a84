package dev.mcpchaos.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Objects;
import java.util.Properties;

/** The {@code mcp-chaos} command line. */
@Command(name = "mcp-chaos",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "A chaos proxy for MCP (Model Context Protocol) traffic: it sits between an MCP client "
                + "and server and breaks single JSON-RPC messages on purpose, reproducibly.",
        subcommands = {StdioCommand.class, HttpCommand.class, DemoCommand.class, DemoServerCommand.class, ValidateCommand.class,
                RulesCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit code (for tests and embedding). */
    public static int run(String... args) {
        return execute(new CommandLine(new Main()), args);
    }

    /**
     * Runs the command line with picocli's output and errors written to {@code out} and {@code err}
     * instead of this process's stdout and stderr, and returns its exit code. Commands that print
     * through picocli ({@code rules}, usage and help) honour them.
     */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(Objects.requireNonNull(out, "out"));
        cli.setErr(Objects.requireNonNull(err, "err"));
        return execute(cli, args);
    }

    private static int execute(CommandLine cli, String... args) {
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("mcp-chaos: " + e.getMessage());
            return 1;
        });
        return cli.execute(args);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is needed: stdio, http, demo, demo-server, validate or rules");
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
