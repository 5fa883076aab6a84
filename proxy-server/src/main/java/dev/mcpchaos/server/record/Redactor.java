package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.mcpchaos.server.redact.SecretRedactor;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Takes the secrets out of what one cassette records, before it is written: the same secret gets
 * the same placeholder ({@code <redacted:1>}, {@code <redacted:2>}, ...) everywhere in the
 * cassette, so two requests that carried one token still look alike. Not thread-safe: one per
 * cassette, used by the recorder's writer thread.
 *
 * <p>What is a secret: the values of the headers {@code Authorization}, {@code Proxy-Authorization},
 * {@code Cookie}, {@code Set-Cookie}, of headers named like a secret ({@link SecretRedactor#isSecretName})
 * and of the headers configured; values at the configured {@link RedactPath paths}; the values of
 * the environment variables named; and whatever {@link SecretRedactor} recognises in any string
 * (a member named like a secret, a bearer token, a JWT, a key with a known prefix).
 */
final class Redactor {

    private static final Set<String> SECRET_HEADERS = Set.of("authorization", "proxy-authorization", "cookie",
            "set-cookie");
    /** A credential's scheme stays readable: {@code Bearer <redacted:1>}. */
    private static final Pattern SCHEME = Pattern.compile("(?i)^(bearer|basic|digest|token)(\\s+)(.+)$");

    private final Set<String> headers;
    private final List<RedactPath> paths;
    /** Longest first, so that a value holding a shorter one is replaced whole. */
    private final List<String> values;
    private final Map<String, String> placeholders = new HashMap<>();
    private final int placeholdersInUse;

    /**
     * @param headers more header names whose values are secrets (any case)
     * @param paths   where values are always redacted
     * @param values  literal secrets (the values of the environment variables named), redacted
     *                wherever they appear in a string
     */
    Redactor(Set<String> headers, List<RedactPath> paths, List<String> values) {
        this(headers, paths, values, 0);
    }

    /**
     * As above, numbering new placeholders after {@code placeholdersInUse} (a cassette that has
     * {@code <redacted:1>} to {@code <redacted:N>} already, being updated).
     */
    Redactor(Set<String> headers, List<RedactPath> paths, List<String> values, int placeholdersInUse) {
        this.placeholdersInUse = placeholdersInUse;
        this.headers = headers.stream().map(h -> h.toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toSet());
        this.paths = List.copyOf(paths);
        this.values = values.stream().filter(v -> !v.isEmpty()).distinct()
                .sorted(Comparator.comparingInt(String::length).reversed()).toList();
    }

    /** The placeholder of {@code secret}: the same one every time in this cassette. */
    String placeholder(String secret) {
        return placeholders.computeIfAbsent(secret, s -> "<redacted:" + (placeholdersInUse + placeholders.size() + 1) + ">");
    }

    /** How many distinct secrets were replaced so far. */
    int secretsSeen() {
        return placeholders.size();
    }

    /** Headers with their secrets replaced; the names and the order stay. */
    List<Map.Entry<String, String>> headers(List<Map.Entry<String, String>> in) {
        List<Map.Entry<String, String>> out = new ArrayList<>(in.size());
        for (Map.Entry<String, String> header : in) {
            String name = header.getKey();
            String lower = name.toLowerCase(Locale.ROOT);
            String value = header.getValue();
            String redacted;
            if (SECRET_HEADERS.contains(lower) || headers.contains(lower) || SecretRedactor.isSecret(name, value)) {
                Matcher scheme = SCHEME.matcher(value);
                redacted = scheme.matches() ? scheme.group(1) + scheme.group(2) + placeholder(scheme.group(3))
                        : placeholder(value);
            } else {
                redacted = text(value);
            }
            out.add(new AbstractMap.SimpleImmutableEntry<>(name, redacted));
        }
        return out;
    }

    /** A message (or a part of the header) with its secrets replaced; changed in place and returned. */
    JsonNode message(JsonNode message) {
        if (message == null) {
            return null;
        }
        if (message.isTextual()) {
            return TextNode.valueOf(text(message.asText()));
        }
        walk(message, new ArrayList<>());
        return message;
    }

    /** Text that is not JSON (a malformed message, a header's value), with its secrets replaced. */
    String text(String text) {
        String out = text;
        for (String value : values) {
            if (out.contains(value)) {
                out = out.replace(value, placeholder(value));
            }
        }
        return SecretRedactor.redact(out, this::placeholder);
    }

    private void walk(JsonNode node, List<String> path) {
        if (node instanceof ObjectNode object) {
            for (String name : names(object)) {
                path.add(name);
                JsonNode value = object.get(name);
                // The value decides too: PWD holding a path is the working directory, not a password.
                JsonNode replaced = redacted(value, path, (value.isTextual() || value.isNumber())
                        && SecretRedactor.isSecret(name, value.isTextual() ? value.asText() : value.toString()));
                if (replaced != null) {
                    object.set(name, replaced);
                }
                path.remove(path.size() - 1);
            }
        } else if (node instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                path.add(Integer.toString(i));
                JsonNode replaced = redacted(array.get(i), path, false);
                if (replaced != null) {
                    array.set(i, replaced);
                }
                path.remove(path.size() - 1);
            }
        }
    }

    /** What takes the place of {@code value} at {@code path}, or null when it stays (its inside redacted). */
    private JsonNode redacted(JsonNode value, List<String> path, boolean secretName) {
        for (RedactPath redactPath : paths) {
            if (redactPath.matches(path)) {
                return TextNode.valueOf(placeholder(value.isTextual() ? value.asText() : value.toString()));
            }
        }
        if (secretName && (value.isTextual() || value.isNumber())) {
            return TextNode.valueOf(placeholder(value.isTextual() ? value.asText() : value.toString()));
        }
        if (value.isTextual()) {
            String text = value.asText();
            String out = text(text);
            return out.equals(text) ? null : TextNode.valueOf(out);
        }
        walk(value, path);
        return null;
    }

    /** A copy: members are replaced while walking. */
    private static List<String> names(ObjectNode object) {
        List<String> all = new ArrayList<>(object.size());
        object.fieldNames().forEachRemaining(all::add);
        return all;
    }
}
