package dev.mcpchaos.server.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.drill.Scorecard;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
 * Each input is optional; what is given is checked to be JSON of the expected shape. The timeline
 * comes from the journal or, without one, from {@linkplain #cassette cassettes} (their recorded
 * messages), or from a {@linkplain #drill drill's scorecard} (its scenarios' journals), or, without
 * any, from the event log's faults.
 */
public final class HtmlReport {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String title;
    private JsonNode journal;
    private final ArrayNode events = JSON.createArrayNode();
    private JsonNode check;
    private ObjectNode drill;
    private final List<Cassette> cassettes = new ArrayList<>();
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
        if (!cassettes.isEmpty() || drill != null) {
            throw new IllegalArgumentException(drill != null ? DRILL_AND : BOTH);
        }
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

    /** Why a report takes a journal or cassettes, not both: each is the whole timeline. */
    private static final String BOTH = "a journal and a cassette both give the timeline, every message of the run "
            + "(expected: one or the other; the event log and the check report go with either)";

    /** Why a drill's scorecard goes with no journal or cassette: its scenarios' journals are the whole timeline. */
    private static final String DRILL_AND = "a drill's scorecard gives the timeline (its scenarios' journals), and so "
            + "does a journal or a cassette (expected: one of them; the event log and the check report go with any)";

    /**
     * A drill's scorecard, as {@code mcp-chaos drill --report-json} writes it ({@code Scorecard#toJson}):
     * the page shows it as a scorecard panel (the verdicts by count, then each scenario's verdict,
     * reason and evidence), and the scenarios' journals as one timeline, in the order they ran,
     * each session named after its scenario ({@code answer-lost: 3f2a...}).
     *
     * @throws IllegalArgumentException when it is not such an object, or the report has a journal
     *                                  or cassettes already
     */
    public HtmlReport drill(String json) {
        if (journal != null || !cassettes.isEmpty()) {
            throw new IllegalArgumentException(DRILL_AND);
        }
        JsonNode node = parse(json, "drill scorecard");
        if (!Scorecard.FORMAT.equals(node.path("format").asText()) || !node.path("scenarios").isArray()) {
            throw new IllegalArgumentException("drill scorecard: an object without \"format\": \"" + Scorecard.FORMAT
                    + "\" and a scenarios array (expected: what drill --report-json writes)");
        }
        for (JsonNode scenario : node.path("scenarios")) {
            if (!scenario.path("name").isTextual() || !scenario.path("outcome").isTextual()) {
                throw new IllegalArgumentException("drill scorecard: a scenario without a name or an outcome: "
                        + scenario);
            }
            if (scenario.has("journal") && !scenario.path("journal").path("entries").isArray()) {
                throw new IllegalArgumentException("drill scorecard: scenario " + scenario.path("name").asText()
                        + ": a journal without an entries array");
            }
        }
        this.drill = (ObjectNode) node;
        return this;
    }

    /**
     * A recording ({@code --record}, see {@code docs/record-replay.md}) as the timeline: each
     * recorded message a row at its time ({@code recordedAt} plus its {@code t}), requests paired
     * with their answers by the page as for a journal. Several cassettes (one per HTTP session)
     * make one timeline, in time order. A cassette holds messages, not what the rules did (by
     * default it records what the peers sent): each fault of the {@linkplain #events event log}
     * is put on the message it hit, found by session, direction, kind and JSON-RPC id.
     *
     * @throws IllegalArgumentException when the report has a journal already, or the cassette's
     *                                  {@code recordedAt} is not a time
     */
    public HtmlReport cassette(Cassette cassette) {
        Objects.requireNonNull(cassette, "cassette");
        if (journal != null || drill != null) {
            throw new IllegalArgumentException(drill != null ? DRILL_AND : BOTH);
        }
        try {
            Instant.parse(cassette.header().recordedAt());
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("cassette: recordedAt '" + cassette.header().recordedAt()
                    + "' (expected: an ISO-8601 time such as 2026-12-02T06:16:27.673Z)", e);
        }
        cassettes.add(cassette);
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
        } else if (!cassettes.isEmpty()) {
            data.set("journal", journalOf(cassettes, events));
        } else if (drill != null) {
            data.set("journal", journalOf(drill));
            ObjectNode card = drill.deepCopy();
            card.withArray("scenarios").forEach(s -> ((ObjectNode) s).remove("journal"));
            data.set("drill", card);
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

    /**
     * A drill's scenarios' journals as one journal, in the order they ran: numbered from 1, times
     * from the first scenario's first message (each proxy counts its own from its start), each
     * session named {@code <scenario>: <session>} so that the sessions table and the timeline say
     * which scenario a message belongs to.
     */
    private static ObjectNode journalOf(JsonNode drill) {
        ObjectNode merged = JSON.createObjectNode();
        ArrayNode entries = JSON.createArrayNode();
        Instant t0 = null;
        long offset = 0; // for entries without a time: the scenarios' own elapsed times, end to end
        long seq = 0;
        for (JsonNode scenario : drill.path("scenarios")) {
            long last = 0;
            for (JsonNode entry : scenario.path("journal").path("entries")) {
                ObjectNode row = entry.deepCopy();
                Instant at = instant(entry.path("time").asText());
                long elapsed = entry.path("elapsed_ns").asLong();
                if (t0 == null && at != null) {
                    t0 = at.minusNanos(elapsed);
                }
                row.put("elapsed_ns", at != null && t0 != null ? Duration.between(t0, at).toNanos() : offset + elapsed);
                last = Math.max(last, row.path("elapsed_ns").asLong());
                row.put("seq", ++seq);
                row.put("session", scenario.path("name").asText() + ": " + entry.path("session").asText());
                row.put("scenario", scenario.path("name").asText());
                entries.add(row);
            }
            offset = Math.max(offset, last);
        }
        merged.put("capacity", entries.size());
        merged.put("evicted", 0);
        merged.put("next", seq + 1);
        merged.set("entries", entries);
        return merged;
    }

    /** One recorded message, at its time. */
    private record Recorded(Instant at, String transport, CassetteEntry entry) {
    }

    /**
     * The cassettes' messages as a journal as {@code GET /journal} serves it (the page's one input
     * for a timeline): in time order, numbered from 1, each fault of {@code events} on its message
     * (see {@link #placeFaults}).
     */
    private static ObjectNode journalOf(List<Cassette> cassettes, ArrayNode events) {
        List<Recorded> all = new ArrayList<>();
        for (Cassette cassette : cassettes) {
            Instant start = Instant.parse(cassette.header().recordedAt());
            for (CassetteEntry entry : cassette.entries()) {
                all.add(new Recorded(start.plusNanos(Math.round(entry.timeMillis() * 1e6)),
                        cassette.header().transport(), entry));
            }
        }
        all.sort(Comparator.comparing(Recorded::at)); // stable: a cassette's own order among equal times
        ObjectNode journal = JSON.createObjectNode();
        journal.put("capacity", all.size());
        journal.put("evicted", 0);
        journal.put("next", all.size() + 1);
        ArrayNode entries = journal.putArray("entries");
        Instant t0 = all.isEmpty() ? Instant.EPOCH : all.get(0).at();
        Map<String, ObjectNode> asked = new HashMap<>(); // requests by session, direction and id, until answered
        long seq = 0;
        for (Recorded r : all) {
            CassetteEntry e = r.entry();
            ObjectNode row = entries.addObject();
            row.put("seq", ++seq);
            row.put("elapsed_ns", Duration.between(t0, r.at()).toNanos());
            row.put("time", r.at().toString());
            row.put("session", e.session());
            row.put("transport", r.transport());
            row.put("direction", e.direction() == Direction.CLIENT_TO_SERVER ? "client_to_server" : "server_to_client");
            JsonNode m = e.message();
            row.put("kind", kindOf(m));
            if (m != null && m.isObject() && m.has("id") && (m.get("id").isNumber() || m.get("id").isTextual())) {
                row.set("id", m.get("id"));
            }
            String method = e.method();
            if (method != null) {
                row.put("method", method);
                JsonNode tool = m.path("params").path("name");
                if (method.equals("tools/call") && tool.isTextual()) {
                    row.put("tool", tool.asText());
                }
                if (row.has("id")) {
                    asked.put(requestKey(e.session(), e.direction(), row.get("id")), row);
                }
            } else if (row.has("id")) {
                // An answer names what it answers, as the journal's entries do: its request's method and tool.
                ObjectNode request = asked.remove(requestKey(e.session(), e.direction() == Direction.CLIENT_TO_SERVER
                        ? Direction.SERVER_TO_CLIENT : Direction.CLIENT_TO_SERVER, row.get("id")));
                if (request != null) {
                    row.put("method", request.path("method").asText());
                    if (request.has("tool")) {
                        row.put("tool", request.path("tool").asText());
                    }
                }
            }
            if (e.http() != null && e.direction() == Direction.SERVER_TO_CLIENT && e.http().status() > 0) {
                row.put("http_status", e.http().status());
            }
            row.put("delivered", true);
        }
        placeFaults(entries, events);
        return journal;
    }

    /** Faults that keep a request from its server: the proxy answers it instead (docs/ui.md's "made"). */
    private static final Set<String> ANSWERED_BY_THE_PROXY = Set.of("error", "tool_error",
            "http_status", "session_expire");

    /**
     * Puts each fault event on the recorded message it hit, as the journal would have: the message
     * of the same session, direction, kind and JSON-RPC id, the nearest in time when there are
     * several (an id used again). A recording by default holds what the peers sent, so that
     * message is there. A fault on a message without an id (a notification) is not placed: which
     * one it was is a guess; the rules panel counts it all the same. A dropped message, or a
     * request the proxy answered itself, is marked not delivered.
     */
    private static void placeFaults(ArrayNode entries, ArrayNode events) {
        Map<String, List<ObjectNode>> byMessage = new HashMap<>();
        for (JsonNode entry : entries) {
            if (entry.has("id")) {
                byMessage.computeIfAbsent(messageKey(entry), k -> new ArrayList<>()).add((ObjectNode) entry);
            }
        }
        for (JsonNode event : events) {
            if (!"fault".equals(event.path("event").asText()) || !event.has("id")) {
                continue;
            }
            List<ObjectNode> candidates = byMessage.get(messageKey(event));
            if (candidates == null) {
                continue;
            }
            Instant at = instant(event.path("time").asText());
            ObjectNode hit = candidates.get(0);
            if (at != null) {
                for (ObjectNode candidate : candidates) {
                    if (distance(candidate, at) < distance(hit, at)) {
                        hit = candidate;
                    }
                }
            }
            ObjectNode fault = (hit.has("faults") ? (ArrayNode) hit.get("faults") : hit.putArray("faults")).addObject();
            fault.put("rule", event.path("rule").asText());
            fault.put("fault", event.path("fault").asText());
            if (event.hasNonNull("detail")) {
                fault.put("detail", event.path("detail").asText());
            }
            String type = event.path("fault").asText();
            if (type.equals("drop") || type.equals("blackhole")
                    || (ANSWERED_BY_THE_PROXY.contains(type) && "request".equals(hit.path("kind").asText()))) {
                hit.put("delivered", false);
            }
        }
    }

    /** Session, direction, kind and id: what names one message in a journal entry and a fault event alike. */
    private static String messageKey(JsonNode node) {
        JsonNode id = node.path("id");
        return node.path("session").asText() + '|' + node.path("direction").asText() + '|' + node.path("kind").asText()
                + '|' + (id.isTextual() ? "s:" : "n:") + id.asText();
    }

    /** A request sent in {@code direction}, by its session and id: what its answer, the other way, is paired by. */
    private static String requestKey(String session, Direction direction, JsonNode id) {
        return session + '|' + direction + '|' + (id.isTextual() ? "s:" : "n:") + id.asText();
    }

    private static long distance(JsonNode entry, Instant at) {
        Instant when = instant(entry.path("time").asText());
        return when == null ? Long.MAX_VALUE : Math.abs(Duration.between(when, at).toNanos());
    }

    private static Instant instant(String text) {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** The journal's kind of a recorded message (null: a line that was not JSON). */
    private static String kindOf(JsonNode m) {
        if (m == null) {
            return "malformed";
        }
        if (m.isArray()) {
            return "batch";
        }
        if (!m.isObject()) {
            return "other";
        }
        if (m.path("method").isTextual()) {
            return m.has("id") ? "request" : "notification";
        }
        if (m.has("error")) {
            return "error";
        }
        return m.has("result") ? "response" : "other";
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
