package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.record.RedactPath;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Compares a recorded message with a live one, member by member, and lists the paths where they
 * differ. A recorded string that is a redaction placeholder ({@code <redacted:N>}) matches any live
 * value: the recorder replaced the secret, so the live secret cannot be compared. Paths covered by
 * an ignore path (JSON pointer or dotted glob, as {@link RedactPath}) are not compared at all.
 */
public final class JsonDiff {

    private static final Pattern PLACEHOLDER = Pattern.compile("<redacted:\\d+>");

    /** How a path differs. */
    public enum Kind {
        /** Present live, absent in the recording. */
        ADDED,
        /** Present in the recording, absent live. */
        REMOVED,
        /** Present in both with different values. */
        CHANGED
    }

    /**
     * One difference.
     *
     * @param kind    how it differs
     * @param pointer where, as a JSON pointer from the message's root
     */
    public record Difference(Kind kind, String pointer) {
        @Override
        public String toString() {
            return switch (kind) {
                case ADDED -> "+" + pointer;
                case REMOVED -> "-" + pointer;
                case CHANGED -> "~" + pointer;
            };
        }
    }

    private final List<RedactPath> ignored;

    /** @param ignored paths not compared */
    public JsonDiff(List<RedactPath> ignored) {
        this.ignored = List.copyOf(Objects.requireNonNull(ignored, "ignored"));
    }

    /** The differences between {@code recorded} and {@code live}, in document order; empty when they match. */
    public List<Difference> diff(JsonNode recorded, JsonNode live) {
        List<Difference> out = new ArrayList<>();
        compare(recorded, live, new ArrayList<>(), out);
        return out;
    }

    private void compare(JsonNode recorded, JsonNode live, List<String> path, List<Difference> out) {
        if (isIgnored(path)) {
            return;
        }
        if (recorded != null && recorded.isTextual() && PLACEHOLDER.matcher(recorded.asText()).find() && live != null) {
            return;
        }
        if (recorded == null) {
            out.add(new Difference(Kind.ADDED, pointer(path)));
        } else if (live == null) {
            out.add(new Difference(Kind.REMOVED, pointer(path)));
        } else if (recorded.isObject() && live.isObject()) {
            for (Iterator<String> names = recorded.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                path.add(name);
                compare(recorded.get(name), live.get(name), path, out);
                path.remove(path.size() - 1);
            }
            for (Iterator<String> names = live.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!recorded.has(name)) {
                    path.add(name);
                    compare(null, live.get(name), path, out);
                    path.remove(path.size() - 1);
                }
            }
        } else if (recorded.isArray() && live.isArray()) {
            int n = Math.max(recorded.size(), live.size());
            for (int i = 0; i < n; i++) {
                path.add(Integer.toString(i));
                compare(recorded.get(i), live.get(i), path, out);
                path.remove(path.size() - 1);
            }
        } else if (!sameValue(recorded, live)) {
            out.add(new Difference(Kind.CHANGED, pointer(path)));
        }
    }

    /** Numbers compare by value (1 and 1.0 are the same); everything else by equality. */
    private static boolean sameValue(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        return a.equals(b);
    }

    private boolean isIgnored(List<String> path) {
        for (RedactPath p : ignored) {
            if (p.matches(path)) {
                return true;
            }
        }
        return false;
    }

    static String pointer(List<String> path) {
        if (path.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (String s : path) {
            b.append('/').append(s.replace("~", "~0").replace("/", "~1"));
        }
        return b.toString();
    }
}
