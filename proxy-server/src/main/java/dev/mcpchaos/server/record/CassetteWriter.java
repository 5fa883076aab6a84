package dev.mcpchaos.server.record;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes a cassette: NDJSON, one line per header, message or gap, each line's keys in a fixed
 * order (see {@code docs/record-replay.md} and {@code docs/cassette-line.schema.json}) so that two
 * recordings of one scenario differ in a diff only where the traffic did. Not thread-safe: the
 * recorder writes from one thread.
 */
public final class CassetteWriter implements AutoCloseable {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Writer out;

    /** @param out where the lines go, as UTF-8; closed with this writer */
    public CassetteWriter(OutputStream out) {
        this.out = new java.io.OutputStreamWriter(Objects.requireNonNull(out, "out"), StandardCharsets.UTF_8);
    }

    /** Writes the header line. */
    public void writeHeader(CassetteHeader header) throws IOException {
        line(headerNode(header));
    }

    /** Writes one message line. */
    public void writeEntry(CassetteEntry entry) throws IOException {
        line(entryNode(entry));
    }

    /** Writes a line saying that {@code dropped} messages were not recorded here, and why. */
    public void writeGap(long dropped, String reason) throws IOException {
        ObjectNode gap = NODES.objectNode();
        gap.put("type", "gap");
        gap.put("dropped", dropped);
        gap.put("reason", reason);
        line(gap);
    }

    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        out.close();
    }

    private void line(ObjectNode node) throws IOException {
        out.write(JsonTrees.text(node));
        out.write('\n');
    }

    static ObjectNode headerNode(CassetteHeader h) {
        ObjectNode node = NODES.objectNode();
        node.put("type", "header");
        node.put("format", Cassette.FORMAT);
        node.put("version", h.version());
        node.put("transport", h.transport());
        node.put("recordedAt", h.recordedAt());
        node.put("recorder", h.recorder());
        putIfPresent(node, "protocolVersion", h.protocolVersion());
        putIfPresent(node, "serverInfo", h.serverInfo());
        putIfPresent(node, "serverCapabilities", h.serverCapabilities());
        putIfPresent(node, "clientInfo", h.clientInfo());
        putIfPresent(node, "clientCapabilities", h.clientCapabilities());
        return node;
    }

    static ObjectNode entryNode(CassetteEntry e) {
        ObjectNode node = NODES.objectNode();
        node.put("type", "message");
        node.put("seq", e.seq());
        // Microseconds are plenty, and a fixed scale keeps the text short and stable.
        node.put("t", BigDecimal.valueOf(e.timeMillis()).setScale(3, RoundingMode.HALF_UP));
        node.put("dir", directionName(e.direction()));
        node.put("session", e.session());
        if (e.http() != null) {
            node.set("http", httpNode(e.http()));
        }
        if (e.message() != null) {
            node.set("message", e.message());
        } else {
            node.put("raw", e.raw());
        }
        return node;
    }

    private static ObjectNode httpNode(HttpExchange x) {
        ObjectNode node = NODES.objectNode();
        node.put("exchange", x.exchange());
        putIfPresent(node, "method", x.method());
        putIfPresent(node, "uri", x.uri());
        if (x.status() != 0) {
            node.put("status", x.status());
        }
        putIfPresent(node, "contentType", x.contentType());
        if (x.sse()) {
            ObjectNode sse = node.putObject("sse");
            putIfPresent(sse, "id", x.sseId());
            putIfPresent(sse, "event", x.sseEvent());
        }
        if (x.requestHeaders() != null) {
            node.set("requestHeaders", headersNode(x.requestHeaders()));
        }
        if (x.responseHeaders() != null) {
            node.set("responseHeaders", headersNode(x.responseHeaders()));
        }
        return node;
    }

    /** Pairs, not an object: a name may repeat ({@code Set-Cookie}), and the order is kept. */
    private static ArrayNode headersNode(List<Map.Entry<String, String>> headers) {
        ArrayNode array = NODES.arrayNode();
        for (Map.Entry<String, String> header : headers) {
            array.addArray().add(header.getKey()).add(header.getValue());
        }
        return array;
    }

    /** {@code c2s} or {@code s2c}. */
    static String directionName(Direction direction) {
        return direction == Direction.CLIENT_TO_SERVER ? "c2s" : "s2c";
    }

    private static void putIfPresent(ObjectNode node, String name, String value) {
        if (value != null) {
            node.put(name, value);
        }
    }

    private static void putIfPresent(ObjectNode node, String name, JsonNode value) {
        if (value != null && !value.isNull()) {
            node.set(name, value);
        }
    }

    /** The line as the writer would write it, without its newline; for tests and tools. */
    public static String toLine(CassetteEntry entry) {
        return JsonTrees.text(entryNode(entry));
    }
}
