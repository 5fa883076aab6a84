package dev.mcpchaos.rules.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JSON form of the journal, as {@code GET /journal} serves it and the Testcontainers module
 * reads it. Keys are stable; absent values are left out. The reference is {@code docs/journal.md}:
 *
 * <pre>{@code
 * {"capacity":10000,"evicted":0,"next":3,"entries":[
 *   {"seq":1,"elapsed_ns":1200000,"time":"2026-12-02T06:00:00.120Z","session":"stdio","transport":"stdio",
 *    "direction":"client_to_server","kind":"request","id":1,"method":"tools/call","tool":"search",
 *    "params_fingerprint":"1f2e3d4c5b6a7988","faults":[{"rule":"lose","fault":"drop","detail":"dropped"}],
 *    "delivered":false}, ...]}
 * }</pre>
 */
public final class JournalJson {

    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JournalJson() {
    }

    /** The snapshot as one JSON object. */
    public static String write(JournalSnapshot snapshot) {
        StringWriter text = new StringWriter(64 + snapshot.entries().size() * 200);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            g.writeNumberField("capacity", snapshot.capacity());
            g.writeNumberField("evicted", snapshot.evicted());
            g.writeNumberField("next", snapshot.next());
            g.writeArrayFieldStart("entries");
            for (JournalEntry entry : snapshot.entries()) {
                write(g, entry);
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return text.toString();
    }

    /** One entry as a JSON object. */
    public static String write(JournalEntry entry) {
        StringWriter text = new StringWriter(200);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            write(g, entry);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return text.toString();
    }

    private static void write(JsonGenerator g, JournalEntry e) throws IOException {
        g.writeStartObject();
        g.writeNumberField("seq", e.sequence());
        g.writeNumberField("elapsed_ns", e.elapsed().toNanos());
        g.writeStringField("time", e.wallTime().toString());
        g.writeStringField("session", e.session());
        g.writeStringField("transport", e.transport());
        g.writeStringField("direction", tag(e.direction()));
        g.writeStringField("kind", tag(e.kind()));
        writeId(g, "id", e.id());
        optional(g, "method", e.method());
        optional(g, "tool", e.tool());
        writeId(g, "request_id", e.requestId());
        if (e.httpStatus() != null) {
            g.writeNumberField("http_status", e.httpStatus());
        }
        if (!e.httpHeaders().isEmpty()) {
            g.writeObjectFieldStart("http_headers");
            for (Map.Entry<String, String> header : e.httpHeaders().entrySet()) {
                g.writeStringField(header.getKey(), header.getValue());
            }
            g.writeEndObject();
        }
        optional(g, "params_fingerprint", e.paramsFingerprint());
        if (e.writeFingerprint() != null && !e.writeFingerprint().equals(e.paramsFingerprint())) {
            // Only when it differs (the arguments held an idempotency key): absent means the same.
            g.writeStringField("write_fingerprint", e.writeFingerprint());
        }
        if (!e.faults().isEmpty()) {
            g.writeArrayFieldStart("faults");
            for (JournalEntry.FaultAction action : e.faults()) {
                g.writeStartObject();
                g.writeStringField("rule", action.rule());
                g.writeStringField("fault", action.fault());
                if (!action.detail().isEmpty()) {
                    g.writeStringField("detail", action.detail());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        g.writeBooleanField("delivered", e.delivered());
        if (e.clientClosed() != null) {
            g.writeNumberField("client_closed_ns", e.clientClosed().toNanos());
        }
        optional(g, "message", e.message());
        g.writeEndObject();
    }

    /**
     * Reads what {@link #write(JournalSnapshot)} wrote.
     *
     * @throws IllegalArgumentException when {@code json} is not a journal, naming what is wrong
     */
    public static JournalSnapshot read(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("journal: not JSON (" + e.getOriginalMessage() + ")", e);
        }
        if (root == null || !root.isObject() || !root.path("entries").isArray()) {
            throw new IllegalArgumentException("journal: " + abbreviate(json)
                    + " (expected: an object with capacity, evicted, next and an entries array)");
        }
        List<JournalEntry> entries = new ArrayList<>();
        for (JsonNode node : root.get("entries")) {
            entries.add(readEntry(node));
        }
        return new JournalSnapshot(entries, root.path("capacity").asInt(0), root.path("evicted").asLong(0),
                root.path("next").asLong(entries.isEmpty() ? 1 : entries.get(entries.size() - 1).sequence() + 1));
    }

    /** Reads one entry object. */
    public static JournalEntry readEntry(JsonNode e) {
        try {
            Map<String, String> headers = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = e.path("http_headers").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> header = it.next();
                headers.put(header.getKey(), header.getValue().asText());
            }
            List<JournalEntry.FaultAction> faults = new ArrayList<>();
            for (JsonNode action : e.path("faults")) {
                faults.add(new JournalEntry.FaultAction(action.path("rule").asText(), action.path("fault").asText(),
                        action.path("detail").asText("")));
            }
            return new JournalEntry(required(e, "seq").asLong(), Duration.ofNanos(required(e, "elapsed_ns").asLong()),
                    Instant.parse(required(e, "time").asText()), required(e, "session").asText(),
                    required(e, "transport").asText(),
                    Direction.valueOf(required(e, "direction").asText().toUpperCase(Locale.ROOT)),
                    MessageKind.valueOf(required(e, "kind").asText().toUpperCase(Locale.ROOT)),
                    readId(e.get("id")), text(e, "method"), text(e, "tool"), readId(e.get("request_id")),
                    e.hasNonNull("http_status") ? e.get("http_status").asInt() : null, headers, faults,
                    e.path("delivered").asBoolean(false), text(e, "params_fingerprint"), text(e, "write_fingerprint"),
                    text(e, "message"), e.hasNonNull("client_closed_ns")
                            ? Duration.ofNanos(e.get("client_closed_ns").asLong()) : null);
        } catch (DateTimeParseException | IllegalArgumentException ex) {
            throw new IllegalArgumentException("journal entry: " + abbreviate(e.toString()) + " (" + ex.getMessage()
                    + ")", ex);
        }
    }

    private static JsonNode required(JsonNode e, String name) {
        JsonNode value = e.get(name);
        if (value == null || value.isNull()) {
            throw new IllegalArgumentException("missing '" + name + "'");
        }
        return value;
    }

    private static String text(JsonNode e, String name) {
        JsonNode value = e.get(name);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static Object readId(JsonNode id) {
        if (id == null || id.isNull()) {
            return null;
        }
        if (id.isIntegralNumber() && id.canConvertToLong()) {
            return id.asLong();
        }
        if (id.isNumber()) {
            return id.decimalValue();
        }
        return id.asText();
    }

    private static void writeId(JsonGenerator g, String name, Object id) throws IOException {
        if (id instanceof Long) {
            g.writeNumberField(name, (Long) id);
        } else if (id instanceof BigDecimal) {
            g.writeNumberField(name, (BigDecimal) id);
        } else if (id instanceof String) {
            g.writeStringField(name, (String) id);
        }
    }

    private static void optional(JsonGenerator g, String name, String value) throws IOException {
        if (value != null) {
            g.writeStringField(name, value);
        }
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    private static String abbreviate(String text) {
        return text.length() <= 120 ? text : text.substring(0, 117) + "...";
    }
}
