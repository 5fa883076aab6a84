package dev.mcpchaos.server.record;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Reader;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Turns a transcript of a stdio session, one message a line with the way it went, into a
 * cassette that {@code mcp-chaos replay} plays: the shape of traffic captured by other tools and
 * older test fixtures (a direction and the raw line), which has no header, no times and no
 * redaction of its own. Two shapes are read, and may be mixed:
 *
 * <ul>
 *   <li>a JSON object per line with {@code direction} (or {@code dir}) and the raw line as
 *       {@code line} (or {@code raw}), or the message itself as {@code message}; optionally
 *       {@code t}, milliseconds since the session began;</li>
 *   <li>a line starting with {@code >} (client to server) or {@code <} (server to client), the
 *       raw line after it.</li>
 * </ul>
 *
 * <p>A direction is {@code c2s} or {@code s2c}, {@code client_to_server} or {@code server_to_client}
 * (also with {@code -} or {@code ->}), or the sender, {@code client} or {@code server}. Blank
 * lines and lines starting with {@code #} are skipped. A raw line that is not JSON is kept as
 * it was ({@code raw} in the cassette), as the recorder keeps broken traffic. Secrets are
 * redacted as a recording redacts them, and the header gets what the {@code initialize}
 * exchange negotiated.
 */
public final class TranscriptImport {

    /**
     * What an import wrote.
     *
     * @param messages how many messages the cassette holds
     * @param unparsed how many of them were not JSON and are kept as raw text
     * @param secrets  how many distinct secrets were replaced by placeholders
     */
    public record Result(int messages, int unparsed, int secrets) {
    }

    private TranscriptImport() {
    }

    /**
     * Reads the transcript {@code in} and writes its cassette to {@code out}.
     *
     * @param name       what error messages call the transcript (its file name)
     * @param redaction  the redaction asked for besides the defaults (headers, paths, environment
     *                   values); its target is not used
     * @param recordedAt the header's {@code recordedAt}
     * @throws CassetteException naming the transcript's line and what is wrong with it; nothing
     *                           usable is written then
     */
    public static Result convert(Reader in, String name, OutputStream out, Recording redaction, Instant recordedAt)
            throws IOException {
        Objects.requireNonNull(redaction, "redaction");
        List<Line> lines = read(in, name);
        if (lines.isEmpty()) {
            throw new CassetteException(name + ": no messages (expected: lines such as {\"direction\":\"c2s\","
                    + "\"line\":\"{...}\"} or '> {...}' and '< {...}')");
        }
        Redactor redactor = new Redactor(redaction.headers(), redaction.paths(), redaction.secretValues());
        // The whole transcript is at hand: a first pass recognises its secrets, so that one given
        // away only in a later line is redacted in the earlier ones too (a recording can only do
        // that once its cassette is closed). Placeholders are numbered in the order recognised.
        for (Line line : lines) {
            JsonNode message = parse(line.raw());
            if (message != null) {
                redactor.message(message);
            } else {
                redactor.text(line.raw());
            }
        }
        List<CassetteEntry> entries = new ArrayList<>(lines.size());
        int unparsed = 0;
        for (Line line : lines) {
            JsonNode message = parse(line.raw());
            if (message == null) {
                unparsed++;
            }
            entries.add(new CassetteEntry(entries.size(), line.timeMillis(), line.direction(), "stdio", null,
                    message != null ? redactor.message(message) : null,
                    message == null ? redactor.text(line.raw()) : null));
        }
        try (CassetteWriter writer = new CassetteWriter(out)) {
            writer.writeHeader(header(entries, recordedAt));
            for (CassetteEntry entry : entries) {
                writer.writeEntry(entry);
            }
        }
        return new Result(entries.size(), unparsed, redactor.secretsSeen());
    }

    private record Line(Direction direction, String raw, double timeMillis) {
    }

    private static List<Line> read(Reader in, String name) throws IOException {
        BufferedReader reader = in instanceof BufferedReader b ? b : new BufferedReader(in);
        List<Line> lines = new ArrayList<>();
        String text;
        int number = 0;
        double lastTime = 0;
        while ((text = reader.readLine()) != null) {
            number++;
            String trimmed = text.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            String where = name + ":" + number + ": ";
            Line line;
            if (trimmed.startsWith(">") || trimmed.startsWith("<")) {
                String raw = trimmed.substring(1).strip();
                if (raw.isEmpty()) {
                    throw new CassetteException(where + "'" + trimmed.charAt(0) + "' with no message after it");
                }
                line = new Line(trimmed.charAt(0) == '>' ? Direction.CLIENT_TO_SERVER : Direction.SERVER_TO_CLIENT,
                        raw, lastTime);
            } else if (trimmed.startsWith("{")) {
                line = objectLine(trimmed, where, lastTime);
            } else {
                throw new CassetteException(where + "'" + abbreviate(trimmed) + "' (expected: a JSON object with a "
                        + "direction and a line, or a line starting with > or <)");
            }
            if (line.timeMillis() < lastTime) {
                throw new CassetteException(where + "t " + line.timeMillis() + " before the line above's " + lastTime
                        + " (expected: times that do not go back)");
            }
            lastTime = line.timeMillis();
            lines.add(line);
        }
        return lines;
    }

    private static Line objectLine(String text, String where, double lastTime) {
        JsonNode node;
        try {
            node = JsonTrees.read(text);
        } catch (JsonProcessingException e) {
            throw new CassetteException(where + "not JSON (" + e.getOriginalMessage() + ")");
        }
        JsonNode direction = node.has("direction") ? node.get("direction") : node.get("dir");
        if (direction == null) {
            throw new CassetteException(where + (node.has("jsonrpc") ? "a JSON-RPC message with no direction"
                    : "no direction") + " (expected: {\"direction\":\"c2s\"|\"s2c\",\"line\":\"...\"}, or the line "
                    + "after > or <)");
        }
        Direction parsed = direction(direction.asText(), where);
        String raw;
        if (node.hasNonNull("line") || node.hasNonNull("raw")) {
            JsonNode line = node.hasNonNull("line") ? node.get("line") : node.get("raw");
            if (!line.isTextual()) {
                throw new CassetteException(where + "line is " + line.getNodeType().name().toLowerCase(Locale.ROOT)
                        + " (expected: the message as text; an object goes in 'message')");
            }
            raw = line.asText();
        } else if (node.hasNonNull("message")) {
            JsonNode message = node.get("message");
            raw = message.isTextual() ? message.asText() : message.toString();
        } else {
            throw new CassetteException(where + "no line (expected: 'line' or 'raw' with the message as text, or "
                    + "'message')");
        }
        double time = lastTime;
        if (node.has("t")) {
            if (!node.get("t").isNumber() || node.get("t").asDouble() < 0) {
                throw new CassetteException(where + "t " + node.get("t") + " (expected: milliseconds since the "
                        + "session began, 0 or more)");
            }
            time = node.get("t").asDouble();
        }
        return new Line(parsed, raw, time);
    }

    /** The directions transcripts are written with; anything else is refused, never guessed. */
    static Direction direction(String value, String where) {
        String v = value.strip().toLowerCase(Locale.ROOT).replace("->", "_to_").replace('-', '_').replace(' ', '_');
        return switch (v) {
            case "c2s", "client_to_server", "client", ">" -> Direction.CLIENT_TO_SERVER;
            case "s2c", "server_to_client", "server", "<" -> Direction.SERVER_TO_CLIENT;
            default -> throw new CassetteException(where + "direction '" + value + "' (expected: c2s or s2c, "
                    + "client_to_server or server_to_client, client or server: who sent it)");
        };
    }

    private static JsonNode parse(String raw) {
        try {
            return JsonTrees.read(raw);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** What the initialize exchange negotiated, as the recorder's header has it. */
    private static CassetteHeader header(List<CassetteEntry> entries, Instant recordedAt) {
        JsonNode request = null;
        JsonNode result = null;
        for (CassetteEntry entry : entries) {
            JsonNode message = entry.message();
            if (message == null) {
                continue;
            }
            if (request == null && entry.direction() == Direction.CLIENT_TO_SERVER && "initialize".equals(entry.method())
                    && message.has("id")) {
                request = message;
            } else if (request != null && result == null && entry.direction() == Direction.SERVER_TO_CLIENT
                    && request.get("id").equals(message.get("id")) && message.has("result")) {
                result = message.get("result");
            }
        }
        JsonNode params = request != null ? request.get("params") : null;
        return new CassetteHeader(Cassette.FORMAT_VERSION, "stdio",
                recordedAt.truncatedTo(ChronoUnit.SECONDS).toString(), "mcp-chaos " + Recorder.version() + " import",
                result != null && result.path("protocolVersion").isTextual() ? result.get("protocolVersion").asText()
                        : null,
                field(result, "serverInfo"), field(result, "capabilities"), field(params, "clientInfo"),
                field(params, "capabilities"));
    }

    private static JsonNode field(JsonNode node, String name) {
        return node != null ? node.get(name) : null;
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
