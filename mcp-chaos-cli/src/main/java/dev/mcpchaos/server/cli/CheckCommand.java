package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.check.CassetteCheck;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.check.Severity;
import dev.mcpchaos.server.record.CassetteException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code mcp-chaos check [options] FILE...}: the referee over recorded cassettes. */
@Command(name = "check",
        mixinStandardHelpOptions = true,
        description = {
            "Check recorded cassettes (see docs/record-replay.md) against the MCP contract: the same checks as "
                    + "--check on a live proxy (docs/checks.md). A summary goes to stderr.",
            "Exit code 1 when an error-level check fired (or a warning with --fail-on warning), 2 when a cassette "
                    + "cannot be read, else 0."},
        footer = {"", "Examples:", "  mcp-chaos check cassettes/everything.ndjson",
            "  mcp-chaos check cassettes/*.ndjson --check-junit target/mcp-checks.xml --fail-on warning"})
final class CheckCommand implements Callable<Integer> {

    @CommandLine.Mixin
    CheckOptions.Reports options = new CheckOptions.Reports();

    @Option(names = "--fail-on", paramLabel = "error|warning", defaultValue = "error",
            description = "The least severity that makes the exit code 1. Default: ${DEFAULT-VALUE}.")
    String failOn;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "The cassettes to check.")
    List<Path> files;

    @Override
    public Integer call() {
        Severity threshold;
        try {
            threshold = Severity.valueOf(failOn.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--fail-on: '" + failOn + "' (expected: error or warning)");
        }
        Referee referee = options.newReferee();
        for (Path file : files) {
            try {
                CassetteCheck.feed(referee, file);
            } catch (NoSuchFileException e) {
                System.err.println("mcp-chaos check: '" + file + "' does not exist (expected: a cassette file)");
                return 2;
            } catch (CassetteException | IOException e) {
                System.err.println("mcp-chaos check: " + e.getMessage());
                return 2;
            }
        }
        Referee.Report report = referee.report();
        if (!options.write(report, System.err, "mcp-chaos check")) {
            return 2;
        }
        return report.failsAt(threshold) ? 1 : 0;
    }
}
