package dev.mcpchaos.server.cli;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.RunningProxy;
import dev.mcpchaos.server.check.Check;
import dev.mcpchaos.server.check.CheckReports;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.check.Severity;
import dev.mcpchaos.server.control.HtmlReport;
import dev.mcpchaos.server.events.EventLog;
import dev.mcpchaos.server.events.EventRing;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/** The referee's options of the proxy commands and of {@code check} (see docs/checks.md). A picocli mixin. */
final class CheckOptions {

    /**
     * The exit code of {@code stdio}, {@code http} and {@code replay} when {@code --check-fail-on}
     * found a violation at its level. Outside every code these commands document (0, 1, 2, 127,
     * 128 + a signal) and the ranges servers and shells commonly use (1-14 for Node.js, 64-78 for
     * sysexits.h, 126-255 for shells and signals), so that a CI log tells "the checks failed"
     * from "the server failed".
     */
    static final int CHECK_FAILED = 80;

    @Option(names = "--check",
            description = "Check every message against the MCP contract (framing, JSON-RPC, lifecycle, tools; see "
                    + "docs/checks.md) without changing any; a summary goes to stderr at the end.")
    boolean check;

    @Option(names = "--check-fail-on", paramLabel = "error|warning",
            description = "After the session, exit with code " + CHECK_FAILED + " when a check of this severity fired "
                    + "(warning: any check) instead of the session's own code (the server's on stdio); implies --check. "
                    + "Default: off, the exit code stays the session's.")
    String failOn;

    @CommandLine.Mixin
    Reports reports = new Reports();

    /** The referee these options made, or null when checking is off. */
    private Referee referee;
    /** The least severity that changes the exit code, or null without --check-fail-on. */
    private Severity threshold;
    /** The warm-up thread was started (once is enough). */
    private boolean warming;

    @Option(names = "--html", paramLabel = "FILE",
            description = "At the end, also write the session as one self-contained HTML file (the live page's "
                    + "timeline, rules and verdicts, with its journal, faults and the checks' report; see docs/ui.md). "
                    + "Implies --check.")
    Path html;

    /**
     * How many of the session's faults {@code --html} keeps for the report, the newest: as many
     * rows as the page's timeline keeps (docs/ui.md), about 5 MB of JSON lines at most.
     */
    static final int HTML_FAULTS = 20_000;

    /** The session's faults as event-log lines, for --html; null without it. */
    private EventRing htmlFaults;
    /** The report {@link #finish(PrintStream, int)} made, for --html. */
    private Referee.Report finished;

    /** Whether checking is on: {@code --check}, or an option that implies it. */
    boolean enabled() {
        return check || reports.report != null || reports.junit != null || failOn != null || html != null;
    }

    /**
     * Puts a referee on the builder when checking is on, and starts loading what the checks and
     * the report need on a thread of its own unless the command did already (see {@link #warmUp}).
     *
     * @throws OptionValueException for a value that cannot be used
     */
    void applyTo(ChaosBuilder<?> builder) {
        if (enabled()) {
            warmUp();
            threshold = failOn == null ? null : severity("--check-fail-on", failOn);
            referee = reports.newReferee();
            builder.check(referee);
            if (html != null) {
                // The event log's fault lines, whether or not --events writes them anywhere.
                htmlFaults = new EventRing(HTML_FAULTS);
                builder.faultListener(new EventLog(null, false, htmlFaults));
            }
        } else if (!reports.deadline.equals("60s")) {
            throw new OptionValueException("--check-deadline: given without --check (expected: --check too)");
        }
    }

    /**
     * After the proxy closed: the summary on {@code err}, the report files, and the exit code the
     * command ends with: {@code exitCode} (the server's, the replay's), or {@link #CHECK_FAILED}
     * when {@code --check-fail-on} found a violation at its level, said in one line on {@code err}.
     * Nothing (and {@code exitCode}) when checking is off.
     */
    int finish(PrintStream err, int exitCode) {
        if (referee == null) {
            return exitCode;
        }
        Referee.Report report = referee.report();
        finished = report;
        reports.write(report, err, "mcp-chaos --check");
        if (threshold == null || !report.failsAt(threshold)) {
            return exitCode;
        }
        long errors = total(report, Severity.ERROR);
        long warnings = total(report, Severity.WARNING);
        err.println("mcp-chaos: --check-fail-on " + threshold.label() + ": " + errors + (errors == 1 ? " error" : " errors")
                + (threshold == Severity.WARNING ? ", " + warnings + (warnings == 1 ? " warning" : " warnings") : "")
                + " found; exit code " + CHECK_FAILED + " (the session's own: " + exitCode + ")");
        return CHECK_FAILED;
    }

    /**
     * {@link #finish(PrintStream, int)}, then the {@code --html} report of {@code proxy}'s session:
     * its journal (when it kept one), its faults and the checks' report. A file that cannot be
     * written is said on {@code err} and leaves the exit code as it is, as for {@code --check-report}.
     */
    int finish(PrintStream err, int exitCode, RunningProxy proxy) {
        int code = finish(err, exitCode);
        if (html != null && finished != null) {
            HtmlReport page = HtmlReport.builder("mcp-chaos " + proxy.transport().name().toLowerCase(Locale.ROOT)
                    + " --check").check(CheckReports.json(finished));
            try {
                page.journal(JournalJson.write(proxy.journal().snapshot()));
            } catch (IllegalStateException journalOff) {
                // --journal off: the timeline is the faults', and the page says so
            }
            page.events(htmlFaults.since(0, HTML_FAULTS).events());
            try {
                page.write(html);
            } catch (UncheckedIOException e) {
                err.println("mcp-chaos: --html: '" + html + "' cannot be written: " + e.getCause().getMessage());
            }
        }
        return code;
    }

    private static long total(Referee.Report report, Severity severity) {
        long n = 0;
        for (Map.Entry<Check, Long> count : report.counts().entrySet()) {
            if (count.getKey().severity() == severity) {
                n += count.getValue();
            }
        }
        return n;
    }

    /** The severity {@code text} names, for {@code option}. */
    static Severity severity(String option, String text) {
        try {
            return Severity.valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new OptionValueException(option + ": '" + text + "' (expected: error or warning)");
        }
    }

    /** A small object schema, for the validator to check against its dialect's meta-schema. */
    private static final String WARM_UP_SCHEMA = "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}},"
            + "\"required\":[\"m\"]}";

    /**
     * Loads what the checks and the report need, on a daemon thread, while the proxy starts and the
     * session goes on: the JSON Schema validator (networknt's, with the Jackson 3 it parses with,
     * about 1,200 classes: 0.3-0.6 s of one core on the 2-core development machine) through a
     * meta-schema check of the two dialects servers send most (2020-12, MCP's default, and
     * draft-07, which the TypeScript SDK's servers name), then the report writers asked for.
     * Without it the referee's worker loaded the validator at the session's first tools/list, and
     * in a session shorter than that loading, the proxy's exit waited for its end (0.4-1.4 s with
     * --check, against 30-70 ms without); in a session of a few seconds it was over long before.
     * Class initialization is once per JVM, so the worker takes what this thread loaded and waits
     * for what it is loading. Only the library and the public report API are used: nothing here
     * depends on how the referee is built inside, and nothing is seen or kept.
     *
     * <p>The commands call this first thing, before they build the proxy: the earlier, the likelier
     * it is done before a short session ends. The price: on a machine without a spare core, that
     * loading competes with the start-up instead (bench/check-exit.sh shows both). Does nothing
     * when checking is off, or the second time.
     */
    void warmUp() {
        if (!enabled() || warming) {
            return;
        }
        warming = true;
        boolean json = reports.report != null;
        boolean junit = reports.junit != null;
        Thread warmUp = new Thread(() -> {
            try {
                for (SpecificationVersion dialect : new SpecificationVersion[] {SpecificationVersion.DRAFT_2020_12,
                        SpecificationVersion.DRAFT_7}) {
                    SchemaRegistry.withDefaultDialect(dialect).getSchema(SchemaLocation.of(dialect.getDialectId()))
                            .validate(WARM_UP_SCHEMA, InputFormat.JSON);
                }
                Referee.Report empty = new Referee().report();
                CheckReports.summary(empty);
                if (json) {
                    CheckReports.json(empty);
                }
                if (junit) {
                    CheckReports.junitXml(empty, "warm-up");
                }
            } catch (RuntimeException | LinkageError e) {
                // Only a head start: the referee meets the same problem on its own path and says so there.
            }
        }, "mcp-chaos-check-warm-up");
        warmUp.setDaemon(true); // never keeps the JVM up
        warmUp.start();
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
