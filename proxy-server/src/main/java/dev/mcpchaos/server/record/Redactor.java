package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.mcpchaos.server.redact.SecretRedactor;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Takes the secrets out of what one cassette records, before it is written. One secret, one
 * placeholder: the same secret value gets the same placeholder ({@code <redacted:1>},
 * {@code <redacted:2>}, ...) everywhere in the cassette, whatever gave it away and wherever it
 * stands (a header, a JSON member, inside a longer string, JSON inside a tool result's text), so
 * that two requests that carried one token still look alike. Not thread-safe: one per cassette,
 * used by the recorder's writer thread.
 *
 * <p>What is a secret: the values of the headers {@code Authorization}, {@code Proxy-Authorization},
 * {@code Cookie}, {@code Set-Cookie}, of headers named like a secret ({@link SecretRedactor#isSecretName})
 * and of the headers configured; values at the configured {@link RedactPath paths}; whatever
 * {@link SecretRedactor} recognises in any string (a member named like a secret, a bearer token, a
 * JWT, a key with a known prefix); and, wherever they appear in a string, the {@link KnownSecrets}:
 * the values of the environment variables named, and each {@linkplain SecretRedactor#isDistinctive
 * distinctive} secret recognised so far in this recording, so that a secret that gave itself away
 * in one message is redacted in the later ones where nothing gives it away.
 *
 * <p>Placeholders are keyed by the secret's value as it was in the traffic: a pass that finds a
 * secret where an earlier pass left a placeholder ({@code "API_TOKEN": "<redacted:1>"} once the
 * environment value was replaced) gets that placeholder back, not a second one.
 */
final class Redactor {

    private static final Set<String> SECRET_HEADERS = Set.of("authorization", "proxy-authorization", "cookie",
            "set-cookie");
    /** A credential's scheme stays readable: {@code Bearer <redacted:1>}. */
    private static final Pattern SCHEME = Pattern.compile("(?i)^(bearer|basic|digest|token)(\\s+)(.+)$");
    /** A placeholder, this redactor's or one a cassette had already (being updated). */
    static final Pattern PLACEHOLDER = Pattern.compile("<redacted:\\d+>");

    private final Set<String> headers;
    private final List<RedactPath> paths;
    private final KnownSecrets known;
    private final Map<String, String> placeholders = new HashMap<>();
    /** The other way: what each placeholder of this redactor's stands for. */
    private final Map<String, String> secrets = new HashMap<>();
    private final int placeholdersInUse;

    /**
     * @param headers more header names whose values are secrets (any case)
     * @param paths   where values are always redacted
     * @param values  literal secrets (the values of the environment variables named), redacted
     *                wherever they appear in a string
     */
    Redactor(Set<String> headers, List<RedactPath> paths, List<String> values) {
        this(headers, paths, new KnownSecrets(values), 0);
    }

    /**
     * As above, with the secrets known to the recording ({@code values} and those learned so far,
     * which this redactor adds to), numbering new placeholders after {@code placeholdersInUse} (a
     * cassette that has {@code <redacted:1>} to {@code <redacted:N>} already, being updated).
     */
    Redactor(Set<String> headers, List<RedactPath> paths, KnownSecrets known, int placeholdersInUse) {
        this.placeholdersInUse = placeholdersInUse;
        this.headers = headers.stream().map(h -> h.toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toSet());
        this.paths = List.copyOf(paths);
        this.known = known;
    }

    /**
     * The placeholder of a secret recognised in the traffic, as it stands there: the same one every
     * time in this cassette. A value that holds placeholders made before (a pass over text an
     * earlier pass redacted) is the secret it was before them; a placeholder alone stays itself; an
     * empty value hides nothing and stays empty. A distinctive secret becomes known to the
     * recording, to be redacted wherever it appears from now on.
     */
    String placeholder(String found) {
        if (found.isEmpty() || PLACEHOLDER.matcher(found).matches()) {
            return found;
        }
        String secret = restore(found);
        if (SecretRedactor.isDistinctive(secret)) {
            known.add(secret);
        }
        return assign(secret);
    }

    /** The placeholder of {@code secret}, given as it was in the traffic; made the first time. */
    private String assign(String secret) {
        return placeholders.computeIfAbsent(secret, s -> {
            String placeholder = "<redacted:" + (placeholdersInUse + placeholders.size() + 1) + ">";
            secrets.put(placeholder, s);
            return placeholder;
        });
    }

    /** {@code found} with this redactor's placeholders put back to the secrets they stand for. */
    private String restore(String found) {
        if (!found.contains("<redacted:")) {
            return found;
        }
        Matcher m = PLACEHOLDER.matcher(found);
        StringBuilder sb = new StringBuilder(found.length());
        int last = 0;
        while (m.find()) {
            String secret = secrets.get(m.group());
            sb.append(found, last, m.start()).append(secret != null ? secret : m.group());
            last = m.end();
        }
        return sb.append(found, last, found.length()).toString();
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
                redacted = credential(value);
            } else {
                redacted = text(value);
            }
            out.add(new AbstractMap.SimpleImmutableEntry<>(name, redacted));
        }
        return out;
    }

    /**
     * The placeholder of a secret-named value; a credential keeps its scheme, and its token the
     * placeholder it has elsewhere: {@code Bearer <redacted:1>}.
     */
    private String credential(String value) {
        Matcher scheme = SCHEME.matcher(value);
        return scheme.matches() ? scheme.group(1) + scheme.group(2) + placeholder(scheme.group(3)) : placeholder(value);
    }

    /** A message (or a part of the header) with its secrets replaced; changed in place and returned. */
    JsonNode message(JsonNode message) {
        if (message == null) {
            return null;
        }
        if (message.isTextual()) {
            return TextNode.valueOf(text(message.asText()));
        }
        int mark = known.count();
        walk(message, new ArrayList<>());
        if (known.count() > mark) {
            // A secret recognised in a later member ("api_key") may stand bare in an earlier one.
            knownIn(message);
        }
        return message;
    }

    /** Text that is not JSON (a malformed message, a header's value), with its secrets replaced. */
    String text(String text) {
        int mark = known.count();
        String out = SecretRedactor.redact(known(text), this::placeholder);
        // A secret recognised further on in the text may stand bare before.
        return known.count() > mark ? known(out) : out;
    }

    /** {@code text} with each known secret (longest first) replaced wherever it stands, but in a placeholder. */
    private String known(String text) {
        String out = text;
        for (String secret : known.in(text)) {
            if (out.contains(secret)) { // a longer one replaced may have held it
                out = replaceOutsidePlaceholders(out, secret, assign(secret));
            }
        }
        return out;
    }

    /**
     * {@code text} with {@code secret} replaced, except inside a placeholder: an environment value
     * as short as {@code 1} must not turn {@code <redacted:1>} into {@code <redacted:<redacted:2>>}.
     */
    static String replaceOutsidePlaceholders(String text, String secret, String placeholder) {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder sb = new StringBuilder(text.length());
        int last = 0;
        while (m.find()) {
            sb.append(text.substring(last, m.start()).replace(secret, placeholder)).append(m.group());
            last = m.end();
        }
        return sb.append(text.substring(last).replace(secret, placeholder)).toString();
    }

    /** Replaces the known secrets in every string of {@code node}. */
    private void knownIn(JsonNode node) {
        if (node instanceof ObjectNode object) {
            for (String name : names(object)) {
                JsonNode value = object.get(name);
                if (value.isTextual()) {
                    String out = known(value.asText());
                    if (!out.equals(value.asText())) {
                        object.set(name, TextNode.valueOf(out));
                    }
                } else {
                    knownIn(value);
                }
            }
        } else if (node instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                JsonNode value = array.get(i);
                if (value.isTextual()) {
                    String out = known(value.asText());
                    if (!out.equals(value.asText())) {
                        array.set(i, TextNode.valueOf(out));
                    }
                } else {
                    knownIn(value);
                }
            }
        }
    }

    private void walk(JsonNode node, List<String> path) {
        if (node instanceof ObjectNode object) {
            for (String name : names(object)) {
                path.add(name);
                JsonNode replaced = redacted(object.get(name), path, name);
                if (replaced != null) {
                    object.set(name, replaced);
                }
                path.remove(path.size() - 1);
            }
        } else if (node instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                path.add(Integer.toString(i));
                JsonNode replaced = redacted(array.get(i), path, null);
                if (replaced != null) {
                    array.set(i, replaced);
                }
                path.remove(path.size() - 1);
            }
        }
    }

    /**
     * What takes the place of {@code value} at {@code path} (a member called {@code name}, or an
     * array's element when null), or null when it stays (its inside redacted).
     */
    private JsonNode redacted(JsonNode value, List<String> path, String name) {
        for (RedactPath redactPath : paths) {
            if (redactPath.matches(path)) {
                // An object or array here is redacted whole, but its JSON text is no value to look for elsewhere.
                return TextNode.valueOf(value.isTextual() ? placeholder(value.asText()) : assign(value.toString()));
            }
        }
        if (name != null && (value.isTextual() || value.isNumber())
                && SecretRedactor.isSecret(name, value.isTextual() ? value.asText() : value.toString())) {
            String redacted = value.isTextual() ? credential(value.asText()) : placeholder(value.toString());
            return redacted.equals(value.asText()) ? null : TextNode.valueOf(redacted);
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
