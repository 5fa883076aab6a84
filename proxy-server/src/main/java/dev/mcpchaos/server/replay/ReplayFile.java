package dev.mcpchaos.server.replay;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;
import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.record.Recording;
import dev.mcpchaos.server.record.TranscriptImport;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A file a replay plays, read: a cassette, or a transcript (one message a line with the way it
 * went, {@code {"direction":"c2s","raw":"..."}} or {@code > ...} / {@code < ...}: what test
 * fixtures of other tools record) imported on the fly by {@link TranscriptImport}, the code and
 * the redaction {@code mcp-chaos import} uses, so that replaying a transcript and replaying the
 * cassette {@code import} makes of it give the same answers.
 *
 * <p>Which one a file is comes from its first line (blank lines and, as a transcript has them,
 * {@code #} lines aside): a cassette's is a JSON object whose {@code type} is one of a
 * cassette's line types ({@code header}, {@code message}, {@code gap}); anything else is read as
 * a transcript. A file that is neither is refused with a {@link CassetteException} that names
 * its line, what was expected, and {@code mcp-chaos import} with the shapes it reads.
 */
public final class ReplayFile {

    /** The line types of a cassette, which a transcript line never has. */
    private static final Set<String> CASSETTE_LINE_TYPES = Set.of("header", "message", "gap");
    /** Requests that take no params by nature: one recorded without them says nothing. */
    private static final Set<String> PARAMLESS = Set.of("initialize", "ping");
    /** What an error about a file that is not a cassette adds: the shapes of a transcript, which import reads too. */
    private static final String TRANSCRIPT_SHAPES = "{\"direction\":\"c2s\",\"raw\":\"{...}\"} lines (or dir, line, "
            + "message), or lines starting with > (client to server) and < (server to client)";

    private final Path path;
    private final Cassette cassette;
    private final TranscriptImport.Result imported;
    private final byte[] importedText;

    private ReplayFile(Path path, Cassette cassette, TranscriptImport.Result imported, byte[] importedText) {
        this.path = path;
        this.cassette = cassette;
        this.imported = imported;
        this.importedText = importedText;
    }

    /**
     * Reads {@code file}: a cassette as it is, a transcript imported with the default redaction
     * ({@code mcp-chaos import} without {@code --redact-path} or {@code --redact-env}).
     *
     * @throws CassetteException naming the file, its line and what was expected, for a file that
     *                           is neither a cassette nor a transcript
     */
    public static ReplayFile read(Path file) throws IOException {
        return read(file, Recording.toFile(file));
    }

    /**
     * Reads {@code file}, a transcript imported with {@code redaction} besides the defaults.
     *
     * @throws CassetteException naming the file, its line and what was expected
     */
    public static ReplayFile read(Path file, Recording redaction) throws IOException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(redaction, "redaction");
        FirstLine first = firstLine(file);
        if (first != null && first.cassetteType() != null) {
            try {
                return new ReplayFile(file, Cassette.read(file), null, null);
            } catch (CassetteException e) {
                if ("header".equals(first.cassetteType())) {
                    throw e; // a cassette, broken further down: its own error says it all
                }
                throw new CassetteException(e.getMessage() + "; a file without a header is replayed only as a "
                        + "transcript, read as mcp-chaos import does: " + TRANSCRIPT_SHAPES);
            }
        }
        try {
            return importTranscript(file, redaction);
        } catch (CassetteException e) {
            throw new CassetteException(e.getMessage() + "; no cassette either (its first line is not a header, "
                    + "{\"type\":\"header\",...}), so replay read it as a transcript, as mcp-chaos import does: "
                    + TRANSCRIPT_SHAPES);
        }
    }

    /**
     * Imports {@code transcript} as {@code mcp-chaos import} does: {@link TranscriptImport} with
     * {@code redaction} besides the defaults, the cassette it writes then read back.
     *
     * @throws CassetteException naming the transcript's line and what is wrong with it
     */
    public static ReplayFile importTranscript(Path transcript, Recording redaction) throws IOException {
        Objects.requireNonNull(transcript, "transcript");
        Objects.requireNonNull(redaction, "redaction");
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        TranscriptImport.Result result;
        try (Reader in = Files.newBufferedReader(transcript, StandardCharsets.UTF_8)) {
            result = TranscriptImport.convert(in, transcript.toString(), text, redaction, Instant.now());
        }
        byte[] bytes = text.toByteArray();
        Cassette cassette = Cassette.read(new InputStreamReader(new ByteArrayInputStream(bytes), StandardCharsets.UTF_8),
                transcript.toString());
        return new ReplayFile(transcript, cassette, result, bytes);
    }

    /** The file read. */
    public Path path() {
        return path;
    }

    /** The cassette: the file's, or the one its transcript was made into. */
    public Cassette cassette() {
        return cassette;
    }

    /** Whether the file was a transcript, imported. */
    public boolean imported() {
        return imported != null;
    }

    /** What the import counted (messages, text that is not JSON, secrets); null for a cassette file. */
    public TranscriptImport.Result importResult() {
        return imported;
    }

    /** The cassette the import wrote, as text (UTF-8 NDJSON); null for a cassette file. */
    public byte[] importedText() {
        return importedText == null ? null : importedText.clone();
    }

    /** {@link #requestsWithoutParams(Cassette)} of this file's cassette. */
    public List<String> requestsWithoutParams() {
        return requestsWithoutParams(cassette);
    }

    /**
     * The methods of the recorded client requests that carry no params (none, null, or an object
     * with nothing but {@code _meta}), one per request, in recorded order; left aside are those
     * that take none by nature ({@code ping}, the {@code .../list} requests) and {@code initialize},
     * matched by its method alone anyway. Such a recording is served by the default match only to
     * requests without params too; {@link MatchMode#METHOD} serves it whatever the params.
     */
    public static List<String> requestsWithoutParams(Cassette cassette) {
        List<String> methods = new ArrayList<>();
        for (CassetteEntry entry : cassette.entries()) {
            JsonNode message = entry.message();
            if (entry.direction() != Direction.CLIENT_TO_SERVER || message == null || !message.has("id")
                    || !message.path("method").isTextual()) {
                continue;
            }
            String method = message.get("method").asText();
            if (PARAMLESS.contains(method) || method.endsWith("/list")) {
                continue;
            }
            JsonNode params = message.get("params");
            boolean none = params == null || params.isNull()
                    || params.isObject() && (params.isEmpty() || params.size() == 1 && params.has("_meta"));
            if (none) {
                methods.add(method);
            }
        }
        return methods;
    }

    /** The first line that says what a file is, and its cassette line type when it has one of them. */
    private record FirstLine(String cassetteType) {
    }

    /** The first line but blank and {@code #} ones, classified; null for a file with none. */
    private static FirstLine firstLine(Path file) throws IOException {
        try (BufferedReader lines = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                String trimmed = line.strip();
                if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                    continue;
                }
                if (!trimmed.startsWith("{")) {
                    return new FirstLine(null);
                }
                try {
                    JsonNode type = JsonTrees.read(trimmed).get("type");
                    return new FirstLine(type != null && type.isTextual() && CASSETTE_LINE_TYPES.contains(type.asText())
                            ? type.asText() : null);
                } catch (JsonProcessingException e) {
                    return new FirstLine(null); // the transcript reader names what is wrong with it
                }
            }
        }
        return null;
    }
}
