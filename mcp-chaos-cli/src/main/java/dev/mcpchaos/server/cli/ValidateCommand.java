package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Rule;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code mcp-chaos validate FILE}: checks a rule file without starting anything. */
@Command(name = "validate",
        mixinStandardHelpOptions = true,
        description = {"Check a rule file without starting a proxy: prints its rules, or the first error with "
                + "the file, the rule, the field, what was given and what was expected (exit code 2)."})
final class ValidateCommand implements Callable<Integer> {

    @Parameters(paramLabel = "FILE", description = "The rule file (YAML, or JSON for .json).")
    Path file;

    @Option(names = "--transport", paramLabel = "stdio|http",
            description = "Also check that every rule can work on this transport (such as http_status on http only).")
    String transport;

    @Override
    public Integer call() {
        try {
            RuleSet rules = RuleSet.load(file);
            if (transport != null) {
                TransportKind kind;
                try {
                    kind = TransportKind.valueOf(transport.toUpperCase(Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    System.err.println("mcp-chaos: --transport: '" + transport + "' (expected: stdio or http)");
                    return StdioCommand.RULES_REFUSED;
                }
                rules.checkTransport(kind);
            }
            System.out.println(file + ": " + rules.rules().size() + " rule" + (rules.rules().size() == 1 ? "" : "s")
                    + (rules.seed().isPresent() ? ", seed " + rules.seed().getAsLong() : "") + ", valid"
                    + (transport != null ? " on " + transport.toLowerCase(Locale.ROOT) : ""));
            for (Rule rule : rules.rules()) {
                System.out.println("  " + rule.name() + ": " + rule.fault().type() + (rule.enabled() ? "" : " (disabled)"));
            }
            return 0;
        } catch (RuleFileException e) {
            System.err.println("mcp-chaos: " + e.getMessage());
            return StdioCommand.RULES_REFUSED;
        }
    }
}
