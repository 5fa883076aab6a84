package dev.mcpchaos.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Takes the options of {@code mcp-chaos http} and {@code mcp-chaos stdio} from environment
 * variables, for a container or a Kubernetes manifest: {@code --max-connections} from
 * {@code MCP_CHAOS_MAX_CONNECTIONS}, {@code --control-token} from {@code MCP_CHAOS_CONTROL_TOKEN}:
 * {@code MCP_CHAOS_} and the option's long name without its dashes, in upper case, {@code -} as
 * {@code _}. An argument on the command line wins over its variable; a variable wins over the
 * option's default. A flag takes {@code true} or {@code false}. An empty variable counts as unset.
 *
 * <p>Not from the environment: {@code --help} and {@code --version}, and {@code stdio}'s
 * {@code --env} (the server inherits the proxy's environment as it is, so a variable for it says
 * nothing more). The reference is {@code docs/cli.md}.
 */
final class EnvironmentDefaults implements CommandLine.IDefaultValueProvider {

    /** What every variable's name begins with. */
    static final String PREFIX = "MCP_CHAOS_";

    /** The commands whose options come from the environment. */
    static final Set<String> COMMANDS = Set.of("http", "stdio");

    private final Map<String, String> env;

    EnvironmentDefaults(Map<String, String> env) {
        this.env = Objects.requireNonNull(env, "env");
    }

    /** The variable an option of one of {@link #COMMANDS} is read from, or null when none is. */
    static String variableOf(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || option.usageHelp() || option.versionHelp()
                || option.command() == null) {
            return null;
        }
        return variableOf(option.command().name(), option.longestName());
    }

    /**
     * The variable the option {@code longestName} of {@code command} is read from, or null when
     * none is (help and version are left out by the caller).
     */
    static String variableOf(String command, String longestName) {
        if (!COMMANDS.contains(command) || longestName.equals("--env")) {
            return null;
        }
        // A loop and a StringBuilder, not a regular expression and a concatenation: FastStart
        // calls this on the way to a stdio proxy's spawn whenever an MCP_CHAOS_* variable is set
        // (MCP_CHAOS_JAVA_OPTS too), and both were compiled or linked there on first use, 5-10 ms.
        int dashes = 0;
        while (dashes < longestName.length() && longestName.charAt(dashes) == '-') {
            dashes++;
        }
        return new StringBuilder(PREFIX)
                .append(longestName.substring(dashes).toUpperCase(Locale.ROOT).replace('-', '_'))
                .toString();
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        String variable = variableOf(arg);
        if (variable == null) {
            return null;
        }
        String value = env.get(variable);
        return value == null || value.isEmpty() ? null : value;
    }

    /**
     * Whether {@code option}'s value came from its variable in this run: it was not on the
     * command line and its variable is set.
     */
    boolean supplied(OptionSpec option, CommandLine.ParseResult parsed) {
        return defaultValue(option) != null && (parsed == null || !parsed.hasMatchedOption(option));
    }

    /**
     * {@code message} (about a value that cannot be used) with the variable it came from named,
     * when an option it names got its value from the environment: otherwise a user reads about
     * {@code --max-connections}, which appears nowhere in their manifest.
     */
    String explain(String message, CommandLine.ParseResult parsed) {
        if (message == null || parsed == null) {
            return message;
        }
        CommandLine.ParseResult command = parsed.subcommand() != null ? parsed.subcommand() : parsed;
        for (OptionSpec option : command.commandSpec().options()) {
            if (message.contains(option.longestName()) && supplied(option, command)) {
                return message + " (" + option.longestName() + " came from the environment variable "
                        + variableOf(option) + ")";
            }
        }
        return message;
    }
}
