package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.control.HtmlReport;
import dev.mcpchaos.server.drill.Scorecard;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code mcp-chaos report [--out FILE] INPUT...}: one self-contained HTML file ({@link HtmlReport},
 * the live page's views with its script, styles and data inline) from the files a run leaves: an
 * event log, a journal dump, cassettes, a check report, recognised by their content. Exit codes: 0
 * written, 1 the file could not be written, 2 an input it cannot use (nothing is written then).
 * A drill's scorecard ({@code drill --report-json}) is an input too: its verdicts as a scorecard
 * panel, its scenarios' journals as the timeline.
 */
@Command(name = "report",
        mixinStandardHelpOptions = true,
        description = {"Write one self-contained HTML file (the live page's timeline, rules, verdicts and rates; "
                + "scripts, styles and data inline, nothing fetched) from what a run left: an event log (--events), "
                + "a journal dump (journal --json, GET /journal), cassettes (--record), a check report "
                + "(--check-report) and a drill's scorecard (drill --report-json), any of them, recognised by their "
                + "content (see docs/ui.md).",
            "The timeline is the journal's, or else the cassettes' messages, or else the drill's scenarios' "
                    + "journals, or else the event log's faults. "
                    + "It opens from disk in a browser with no network."},
        footer = {"", "Examples:",
            "  mcp-chaos report events.ndjson",
            "  mcp-chaos report --out run.html journal.json events.ndjson check.json",
            "  mcp-chaos report --out replay.html cassettes/*.ndjson events.ndjson",
            "  mcp-chaos report --out drill.html scorecard.json",
            "", "Exit codes: 0 written, 1 the file cannot be written, 2 an input it cannot use (nothing written)."})
final class ReportCommand implements Callable<Integer> {

    /** What {@code --out} is when not given. */
    static final String DEFAULT_OUT = "mcp-chaos-report.html";

    private static final ObjectMapper JSON = new ObjectMapper();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE", defaultValue = DEFAULT_OUT,
            description = "Where to write the HTML file. Default: ${DEFAULT-VALUE}.")
    Path out;

    @Option(names = "--title", paramLabel = "TEXT",
            description = "The report's title. Default: the inputs' file names.")
    String title;

    @Parameters(paramLabel = "INPUT", arity = "1..*",
            description = "Event logs, a journal dump, cassettes, a check report, a drill's scorecard, in any order.")
    List<Path> inputs;

    /** What an input is. */
    enum Kind {
        EVENT_LOG("event log"), JOURNAL("journal"), CASSETTE("cassette"), CHECK_REPORT("check report"),
        DRILL("drill scorecard");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        HtmlReport report = HtmlReport.builder(title != null ? title : defaultTitle());
        List<Path> seen = new ArrayList<>();
        Path journal = null;
        Path check = null;
        Path drill = null;
        int events = 0;
        int cassettes = 0;
        for (Path input : inputs) {
            String text;
            try {
                text = Files.readString(input, StandardCharsets.UTF_8);
            } catch (IOException e) {
                err.println("mcp-chaos: " + input + ": cannot be read: " + e.getMessage());
                return OptionValueException.EXIT_CODE;
            }
            Kind kind = recognise(text);
            if (kind == null) {
                err.println("mcp-chaos: " + input + ": not an event log, journal, cassette, check report or drill "
                        + "scorecard (first line: "
                        + firstLine(text) + ")");
                return OptionValueException.EXIT_CODE;
            }
            try {
                switch (kind) {
                    case EVENT_LOG -> {
                        report.events(text.lines().toList());
                        events++;
                    }
                    case JOURNAL -> {
                        if (journal != null) {
                            return twice(err, kind, journal, input);
                        }
                        journal = input;
                        report.journal(text);
                    }
                    case CHECK_REPORT -> {
                        if (check != null) {
                            return twice(err, kind, check, input);
                        }
                        check = input;
                        report.check(text);
                    }
                    case DRILL -> {
                        if (drill != null) {
                            return twice(err, kind, drill, input);
                        }
                        drill = input;
                        report.drill(text);
                    }
                    case CASSETTE -> {
                        report.cassette(Cassette.read(new StringReader(text), input.toString()));
                        cassettes++;
                    }
                }
            } catch (IllegalArgumentException | CassetteException e) {
                err.println("mcp-chaos: " + input + " (" + kind.label + "): " + e.getMessage());
                return OptionValueException.EXIT_CODE;
            } catch (IOException e) {
                throw new UncheckedIOException(e); // a StringReader does not fail
            }
            seen.add(input);
        }
        try {
            report.write(out);
        } catch (UncheckedIOException e) {
            err.println("mcp-chaos: --out: " + e.getMessage());
            return 1;
        }
        err.println("mcp-chaos: report written to " + out + " (" + (journal != null ? "journal " + journal.getFileName()
                : cassettes > 0 ? cassettes + (cassettes == 1 ? " cassette" : " cassettes")
                : drill != null ? "drill scorecard " + drill.getFileName() : "no journal or cassette")
                + ", " + events + (events == 1 ? " event log" : " event logs") + ", "
                + (check != null ? "check report " + check.getFileName() : "no check report") + ")");
        return 0;
    }

    /** Refuses a second journal or check report: each is one run's whole, and two cannot be one report. */
    private static int twice(PrintWriter err, Kind kind, Path first, Path second) {
        err.println("mcp-chaos: " + second + ": a second " + kind.label + " (the first: " + first
                + "; expected: one " + kind.label + " a report)");
        return OptionValueException.EXIT_CODE;
    }

    private String defaultTitle() {
        List<String> names = new ArrayList<>();
        inputs.forEach(p -> names.add(String.valueOf(p.getFileName())));
        return String.join(", ", names);
    }

    /**
     * What {@code text} is, by its content, or null when it is none of the inputs: a cassette's
     * first line is its header ({@code "format":"mcp-chaos-cassette"}), an event log's lines are
     * objects with an {@code event}; a journal is an object with an {@code entries} array (as
     * {@code GET /journal} and {@code journal --json} give it), a check report one with a
     * {@code checks} array (as {@code --check-report} writes it), a drill's scorecard one with
     * {@code "format": "mcp-chaos-drill"} (as {@code drill --report-json} writes it).
     */
    static Kind recognise(String text) {
        String first = text.lines().filter(line -> !line.isBlank()).findFirst().orElse(null);
        if (first == null) {
            return null;
        }
        JsonNode line = object(first);
        if (line != null) {
            if ("header".equals(line.path("type").asText()) && Cassette.FORMAT.equals(line.path("format").asText())) {
                return Kind.CASSETTE;
            }
            if (line.path("event").isTextual()) {
                return Kind.EVENT_LOG;
            }
        }
        JsonNode whole = line != null && text.strip().equals(first.strip()) ? line : object(text);
        if (whole == null) {
            return null;
        }
        if (Scorecard.FORMAT.equals(whole.path("format").asText())) {
            return Kind.DRILL;
        }
        if (whole.path("entries").isArray()) {
            return Kind.JOURNAL;
        }
        return whole.path("checks").isArray() ? Kind.CHECK_REPORT : null;
    }

    /** {@code text} as a JSON object, or null when it is not one. */
    private static JsonNode object(String text) {
        try {
            JsonNode node = JSON.readTree(text);
            return node != null && node.isObject() ? node : null;
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** The first line of {@code text}, shortened, for a refusal. */
    static String firstLine(String text) {
        if (text.isEmpty()) {
            return "none, the file is empty";
        }
        String first = text.lines().findFirst().orElse("");
        return first.length() > 80 ? first.substring(0, 80) + "..." : first;
    }
}
