package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.check.CheckReports;
import dev.mcpchaos.server.check.Referee;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;

/** The referee's options of the proxy commands and of {@code check} (see docs/checks.md). A picocli mixin. */
final class CheckOptions {

    @Option(names = "--check",
            description = "Check every message against the MCP contract (framing, JSON-RPC, lifecycle, tools; see "
                    + "docs/checks.md) without changing any; a summary goes to stderr at the end.")
    boolean check;

    @CommandLine.Mixin
    Reports reports = new Reports();

    /** The referee these options made, or null when checking is off. */
    private Referee referee;

    boolean enabled() {
        return check || reports.report != null || reports.junit != null;
    }

    /** Puts a referee on the builder when checking is on. */
    void applyTo(ChaosBuilder<?> builder) {
        if (enabled()) {
            referee = reports.newReferee();
            builder.check(referee);
        } else if (!reports.deadline.equals("60s")) {
            throw new OptionValueException("--check-deadline: given without --check (expected: --check too)");
        }
    }

    /** After the proxy closed: the summary on {@code err}, and the report files. Nothing when off. */
    void finish(PrintStream err) {
        if (referee != null) {
            reports.write(referee.report(), err, "mcp-chaos --check");
        }
    }

    /**
     * The report files and the deadline, shared by the proxy commands' {@code --check} and by
     * {@code check}. A picocli mixin.
     */
    static final class Reports {

        @Option(names = "--check-report", paramLabel = "FILE",
                description = "Write the checks' report here as JSON at the end (implies --check).")
        Path report;

        @Option(names = "--check-junit", paramLabel = "FILE",
                description = "Write the checks' report here as JUnit XML at the end, one test case per check "
                        + "(implies --check).")
        Path junit;

        @Option(names = "--check-deadline", paramLabel = "DURATION", defaultValue = "60s",
                description = "How long a request may wait for its answer before jsonrpc.unanswered-request. "
                        + "Default: ${DEFAULT-VALUE}.")
        String deadline;

        /** A new referee with the deadline given. */
        Referee newReferee() {
            Duration limit;
            try {
                limit = Units.parseDuration(deadline);
            } catch (IllegalArgumentException e) {
                throw new OptionValueException("--check-deadline: '" + deadline + "' (expected: a duration such as 60s)");
            }
            if (limit.isZero() || limit.isNegative()) {
                throw new OptionValueException("--check-deadline: '" + deadline + "' (expected: > 0)");
            }
            return new Referee(limit);
        }

        /** The summary on {@code err} and the files asked for; returns false when a file could not be written. */
        boolean write(Referee.Report result, PrintStream err, String suite) {
            err.print(CheckReports.summary(result));
            boolean ok = true;
            try {
                if (report != null) {
                    CheckReports.write(report, CheckReports.json(result));
                }
            } catch (IOException e) {
                err.println("mcp-chaos: --check-report: '" + report + "' cannot be written: " + e.getMessage());
                ok = false;
            }
            try {
                if (junit != null) {
                    CheckReports.write(junit, CheckReports.junitXml(result, suite));
                }
            } catch (IOException e) {
                err.println("mcp-chaos: --check-junit: '" + junit + "' cannot be written: " + e.getMessage());
                ok = false;
            }
            return ok;
        }
    }
}
