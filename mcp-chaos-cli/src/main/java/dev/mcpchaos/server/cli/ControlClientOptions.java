package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.cli.ControlClient.ControlException;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.io.PrintWriter;
import java.net.URI;

/**
 * How a command reaches a running proxy's control API: {@code --control} and {@code --token},
 * declared once for the commands that talk to a proxy ({@code rules} and its subcommands,
 * {@code journal}). A picocli mixin.
 */
final class ControlClientOptions {

    // Inherited, so that both "rules --control X list" and "rules list --control X" work (journal
    // has no subcommands: nothing to inherit there). No defaultValue: the defaults are applied in
    // act(), because picocli would apply an inherited option's default again at the subcommand
    // and undo a value given before it.
    @Option(names = "--control", paramLabel = "URL", scope = ScopeType.INHERIT, converter = UrlConverter.class,
            description = "The proxy's control API: a URL, or HOST:PORT for http. Default: http://127.0.0.1:9090.")
    URI control;

    @Option(names = "--token", paramLabel = "TOKEN", scope = ScopeType.INHERIT,
            description = "The proxy's control token, when it has one. Default: the " + ChaosOptions.TOKEN_VARIABLE
                    + " environment variable, which, unlike the command line, ps does not show.")
    String token;

    /**
     * Runs {@code action} with a client of the control API at {@code --control} (not given: the
     * default URL) with {@code --token} (not given: the {@link ChaosOptions#TOKEN_VARIABLE}
     * variable's); a refusal or no answer is one line on {@code err} and exit code 1. Both writers
     * are flushed at the end.
     */
    int act(PrintWriter out, PrintWriter err, RulesCommand.Action action) {
        try {
            return action.run(new ControlClient(control == null ? ControlClient.DEFAULT_URL : control,
                    token != null ? token : System.getenv(ChaosOptions.TOKEN_VARIABLE)));
        } catch (ControlException e) {
            err.println("mcp-chaos: " + e.getMessage());
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Turns {@code --control}'s text into a URL, or a usage error. */
    static final class UrlConverter implements CommandLine.ITypeConverter<URI> {
        @Override
        public URI convert(String value) {
            try {
                return ControlClient.parseUrl(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
