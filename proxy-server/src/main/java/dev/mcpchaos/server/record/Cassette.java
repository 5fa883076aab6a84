package dev.mcpchaos.server.record;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A cassette read back: its header, its messages in recorded order, and how many messages the
 * recorder could not keep (a {@code gap} line; 0 for a whole recording).
 *
 * <p>The format (NDJSON, one line per message, version {@value #FORMAT_VERSION}) is described in
 * {@code docs/record-replay.md}; {@code docs/cassette-line.schema.json} is a JSON Schema of a line.
 *
 * @param header         the header line
 * @param entries        the message lines, in order
 * @param droppedMessages how many messages the gap lines say were not recorded
 */
public record Cassette(CassetteHeader header, List<CassetteEntry> entries, long droppedMessages) {

    /** The value of a header line's {@code format}. */
    public static final String FORMAT = "mcp-chaos-cassette";

    /** The format version this build writes and reads. */
    public static final int FORMAT_VERSION = 1;

    public Cassette {
        Objects.requireNonNull(header, "header");
        entries = List.copyOf(entries);
    }

    /**
     * Reads a cassette file.
     *
     * @throws CassetteException naming the file, the line and what is wrong, for a file that is
     *                           not a cassette of a version this build reads
     */
    public static Cassette read(Path file) throws IOException {
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return read(in, file.toString());
        }
    }

    /** Reads a cassette from {@code in}; {@code name} is what error messages call it. */
    public static Cassette read(Reader in, String name) throws IOException {
        BufferedReader lines = in instanceof BufferedReader b ? b : new BufferedReader(in);
        CassetteHeader header = null;
        List<CassetteEntry> entries = new ArrayList<>();
        long dropped = 0;
        String line;
        int number = 0;
        while ((line = lines.readLine()) != null) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = JsonTrees.read(line);
            } catch (JsonProcessingException e) {
                throw new CassetteException(name + ":" + number + ": not JSON (" + e.getOriginalMessage()
                        + "; expected: one JSON object per line)");
            }
            if (!node.isObject()) {
                throw new CassetteException(name + ":" + number + ": " + node.getNodeType().name().toLowerCase()
                        + " (expected: one JSON object per line)");
            }
            String type = text(node, "type");
            if (header == null && !"header".equals(type)) {
                throw new CassetteException(name + ":" + number + ": type '" + type
                        + "' (expected: the first line to be the header, type 'header')");
            }
            switch (type == null ? "" : type) {
                case "header" -> {
                    if (header != null) {
                        throw new CassetteException(name + ":" + number + ": a second header (expected: one, first)");
                    }
                    header = header(node, name, number);
                }
                case "message" -> entries.add(entry(node, name, number));
                case "gap" -> dropped += node.path("dropped").asLong();
                default -> throw new CassetteException(name + ":" + number + ": type '" + type
                        + "' (expected: header, message or gap)");
            }
        }
        if (header == null) {
            throw new CassetteException(name + ": empty (expected: a header line, then one line per message)");
        }
        return new Cassette(header, entries, dropped);
    }

    private static CassetteHeader header(JsonNode node, String name, int number) {
        if (!FORMAT.equals(text(node, "format"))) {
            throw new CassetteException(name + ":" + number + ": format '" + text(node, "format") + "' (expected: '"
                    + FORMAT + "')");
        }
        int version = node.path("version").asInt(-1);
        if (version != FORMAT_VERSION) {
            throw new CassetteException(name + ":" + number + ": version " + node.get("version")
                    + " (expected: " + FORMAT_VERSION + "; this build reads no other)");
        }
        return new CassetteHeader(version, required(node, "transport", name, number),
                required(node, "recordedAt", name, number), required(node, "recorder", name, number),
                text(node, "protocolVersion"), node.get("serverInfo"), node.get("serverCapabilities"),
                node.get("clientInfo"), node.get("clientCapabilities"));
    }

    private static CassetteEntry entry(JsonNode node, String name, int number) {
        String dir = required(node, "dir", name, number);
        Direction direction = switch (dir) {
            case "c2s" -> Direction.CLIENT_TO_SERVER;
            case "s2c" -> Direction.SERVER_TO_CLIENT;
            default -> throw new CassetteException(name + ":" + number + ": dir '" + dir + "' (expected: c2s or s2c)");
        };
        JsonNode message = node.get("message");
        String raw = text(node, "raw");
        if ((message == null) == (raw == null)) {
            throw new CassetteException(name + ":" + number
                    + ": expected exactly one of 'message' (the message as JSON) and 'raw' (text that is not JSON)");
        }
        JsonNode http = node.get("http");
        return new CassetteEntry(node.path("seq").asLong(), node.path("t").asDouble(), direction,
                required(node, "session", name, number), http == null ? null : http(http), message, raw);
    }

    private static HttpExchange http(JsonNode node) {
        JsonNode sse = node.get("sse");
        return new HttpExchange(node.path("exchange").asInt(), text(node, "method"), text(node, "uri"),
                node.path("status").asInt(0), text(node, "contentType"), sse != null,
                sse == null ? null : text(sse, "id"), sse == null ? null : text(sse, "event"),
                headers(node.get("requestHeaders")), headers(node.get("responseHeaders")));
    }

    private static List<Map.Entry<String, String>> headers(JsonNode pairs) {
        if (pairs == null) {
            return null;
        }
        List<Map.Entry<String, String>> headers = new ArrayList<>();
        for (JsonNode pair : pairs) {
            headers.add(new AbstractMap.SimpleImmutableEntry<>(pair.path(0).asText(), pair.path(1).asText()));
        }
        return headers;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isTextual() ? value.asText() : null;
    }

    private static String required(JsonNode node, String field, String name, int number) {
        String value = text(node, field);
        if (value == null) {
            throw new CassetteException(name + ":" + number + ": no '" + field + "' (expected: a string)");
        }
        return value;
    }
}
