package dev.mcpchaos.server.record;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Re-records a cassette's answers from a live server ({@code replay --verify --update}): each
 * recorded answer given a live one is replaced by it, with the recorded id, and redacted before it
 * is written, as the recorder does (bearer tokens, JWTs, keys with a known prefix, members named
 * like secrets; new placeholders numbered after those the cassette has). Where the recorded answer
 * held a placeholder and the live one holds a string at the same place, the placeholder stays: the
 * secret it stands for was never in the cassette and must not enter it now. Everything else (the
 * header, the requests, timings, HTTP fields) is kept; the file is replaced atomically.
 */
public final class CassetteUpdate {

    private static final Pattern PLACEHOLDER = Pattern.compile("<redacted:(\\d+)>");

    private CassetteUpdate() {
    }

    /**
     * Writes {@code original} with the answers of the entries whose {@code seq} is a key of
     * {@code liveAnswers} replaced, to {@code target}.
     *
     * @return how many answers were replaced
     * @throws IllegalArgumentException for a cassette with gaps (dropped messages), which cannot be
     *                                  rewritten faithfully
     */
    public static int write(Cassette original, Map<Long, JsonNode> liveAnswers, Path target) throws IOException {
        Objects.requireNonNull(liveAnswers, "liveAnswers");
        if (original.droppedMessages() > 0) {
            throw new IllegalArgumentException("the cassette has gaps (" + original.droppedMessages() + " messages "
                    + "dropped while recording): an update would move them (expected: a cassette without gap lines; "
                    + "record it again)");
        }
        Redactor redactor = new Redactor(Set.of(), List.of(), new KnownSecrets(List.of()), highestPlaceholder(original));
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, ".update", ".tmp");
        int replaced = 0;
        try (OutputStream out = Files.newOutputStream(tmp); CassetteWriter writer = new CassetteWriter(out)) {
            writer.writeHeader(original.header());
            for (CassetteEntry entry : original.entries()) {
                JsonNode live = liveAnswers.get(entry.seq());
                if (live != null && entry.message() != null) {
                    ObjectNode updated = (ObjectNode) live.deepCopy();
                    updated.set("id", entry.message().get("id"));
                    keepPlaceholders(entry.message(), updated);
                    entry = new CassetteEntry(entry.seq(), entry.timeMillis(), entry.direction(), entry.session(),
                            entry.http(), redactor.message(updated), null);
                    replaced++;
                }
                writer.writeEntry(entry);
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return replaced;
    }

    /** Puts the recorded placeholders back where the live answer has a string in their place. */
    private static void keepPlaceholders(JsonNode recorded, JsonNode live) {
        if (recorded.isObject() && live.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = recorded.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                JsonNode other = live.get(field.getKey());
                if (other == null) {
                    continue;
                }
                if (isPlaceholder(field.getValue()) && other.isTextual()) {
                    ((ObjectNode) live).set(field.getKey(), field.getValue());
                } else {
                    keepPlaceholders(field.getValue(), other);
                }
            }
        } else if (recorded.isArray() && live.isArray()) {
            for (int i = 0; i < Math.min(recorded.size(), live.size()); i++) {
                if (isPlaceholder(recorded.get(i)) && live.get(i).isTextual()) {
                    ((ArrayNode) live).set(i, recorded.get(i));
                } else {
                    keepPlaceholders(recorded.get(i), live.get(i));
                }
            }
        }
    }

    private static boolean isPlaceholder(JsonNode node) {
        return node.isTextual() && PLACEHOLDER.matcher(node.asText()).find();
    }

    private static int highestPlaceholder(Cassette cassette) {
        int highest = 0;
        Matcher inHeader = PLACEHOLDER.matcher(JsonTrees.text(CassetteWriter.headerNode(cassette.header())));
        while (inHeader.find()) {
            highest = Math.max(highest, Integer.parseInt(inHeader.group(1)));
        }
        for (CassetteEntry entry : cassette.entries()) {
            Matcher m = PLACEHOLDER.matcher(CassetteWriter.toLine(entry));
            while (m.find()) {
                highest = Math.max(highest, Integer.parseInt(m.group(1)));
            }
        }
        return highest;
    }
}
