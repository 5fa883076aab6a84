package dev.mcpchaos.rules.internal;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.Locale;

/** Formats values for messages and logs. Not API. */
public final class Text {

    private Text() {
    }

    /** A duration as a person would write it in a rule file: {@code 250ms}, {@code 2s}, {@code 1.5s}, {@code 2m}. */
    public static String duration(Duration d) {
        long nanos = d.toNanos();
        if (nanos % 1_000_000 != 0) {
            return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
        }
        long millis = nanos / 1_000_000;
        if (millis == 0 || Math.abs(millis) < 1000) {
            return millis + "ms";
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        if (millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        return millis + "ms";
    }

    /** A value as given in a rule file, for an error message: strings quoted, everything else as JSON. */
    public static String given(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "missing";
        }
        if (node.isTextual()) {
            return quote(node.textValue());
        }
        return node.toString();
    }

    /** {@code 'text'}, shortened when long. */
    public static String quote(String text) {
        String shown = text.length() > 80 ? text.substring(0, 77) + "..." : text;
        return "'" + shown + "'";
    }

    /** A JSON-RPC id for logs: strings quoted, numbers bare, {@code null} for none. */
    public static String id(Object id) {
        return id instanceof String ? "\"" + id + "\"" : String.valueOf(id);
    }
}
