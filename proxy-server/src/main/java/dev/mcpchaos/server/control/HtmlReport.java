package dev.mcpchaos.server.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One self-contained HTML file with the live page's views (timeline, rules, verdicts, rates) of a
 * finished run: the page's own script and styles inline, the data in the file, nothing fetched,
 * so that it opens from disk in a browser with no network and can be attached to a CI run. The
 * reference is {@code docs/ui.md}.
 *
 * <pre>{@code
 * String html = HtmlReport.builder("nightly chaos run")
 *         .journal(JournalJson.write(proxy.journal().snapshot()))   // or GET /journal
 *         .events(Files.readAllLines(Path.of("events.ndjson")))     // --events FILE
 *         .check(CheckReports.json(referee.report()))               // or GET /check
 *         .render();
 * }</pre>
 *
 * Each input is optional; what is given is checked to be JSON of the expected shape.
 */
public final class HtmlReport {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String title;
    private JsonNode journal;
    private final ArrayNode events = JSON.createArrayNode();
    private JsonNode check;
    private Instant generated = Instant.now();

    private HtmlReport(String title) {
        this.title = Objects.requireNonNull(title, "title");
    }

    /** A report named {@code title} (shown in its header and the window's title). */
    public static HtmlReport builder(String title) {
        return new HtmlReport(title);
    }

    /**
     * The journal, as {@code GET /journal} serves it ({@code JournalJson.write}).
     *
     * @throws IllegalArgumentException when it is not such an object
     */
    public HtmlReport journal(String json) {
        JsonNode node = parse(json, "journal");
        if (!node.path("entries").isArray()) {
            throw new IllegalArgumentException("journal: an object without an entries array (expected: what GET "
                    + "/journal serves)");
        }
        this.journal = node;
        return this;
    }

    /**
     * Events, one JSON object each, as an event log's lines ({@code --events FILE}) or the
     * {@code events} of {@code GET /events}; blank lines are skipped.
     *
     * @throws IllegalArgumentException naming the first line that is not a JSON object with an {@code event}
     */
    public HtmlReport events(List<String> lines) {
        int n = 0;
        for (String line : lines) {
            n++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode event = parse(line, "event line " + n);
            if (!event.path("event").isTextual()) {
                throw new IllegalArgumentException("event line " + n + ": no \"event\" (expected: a line of an "
                        + "event log, see docs/events.md)");
            }
            events.add(event);
        }
        return this;
    }

    /**
     * The referee's report, as {@code --check-json} writes it or {@code GET /check} serves it.
     *
     * @throws IllegalArgumentException when it is not such an object
     */
    public HtmlReport check(String json) {
        JsonNode node = parse(json, "check report");
        if (!node.path("checks").isArray()) {
            throw new IllegalArgumentException("check report: an object without a checks array (expected: what "
                    + "--check-json writes)");
        }
        this.check = node;
        return this;
    }

    /** When it was written, shown in its header; default now. */
    public HtmlReport generated(Instant when) {
        this.generated = Objects.requireNonNull(when, "when");
        return this;
    }

    private static JsonNode parse(String json, String what) {
        try {
            JsonNode node = JSON.readTree(json);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException(what + ": not a JSON object");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(what + ": not JSON (" + e.getOriginalMessage() + ")", e);
        }
    }

    /** The HTML file's text. */
    public String render() {
        ObjectNode data = JSON.createObjectNode();
        data.put("title", title);
        data.put("generated", generated.toString());
        if (journal != null) {
            data.set("journal", journal);
        }
        data.set("events", events);
        if (check != null) {
            data.set("check", check);
        }
        // '<' only occurs inside JSON strings, where its escape means the same: no "</script>" can end the block.
        String embedded = data.toString().replace("<", "\\u003c");
        String page = UiPages.text("index.html");
        return page
                .replace("<title>mcp-chaos</title>", "<title>mcp-chaos report: " + escape(title) + "</title>")
                .replace("<link rel=\"stylesheet\" href=\"app.css\">", "<style>\n" + UiPages.text("app.css") + "</style>")
                .replace("<script src=\"app.js\" defer></script>\n", "")
                .replace("</body>", "<script id=\"mcp-chaos-data\" type=\"application/json\">" + embedded
                        + "</script>\n<script>\n" + UiPages.text("app.js") + "</script>\n</body>");
    }

    /** Writes {@link #render()} to {@code file} (UTF-8). */
    public void write(Path file) {
        try {
            Files.writeString(file, render(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report " + file + ": " + e.getMessage(), e);
        }
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
