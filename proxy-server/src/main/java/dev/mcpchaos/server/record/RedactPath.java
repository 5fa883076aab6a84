package dev.mcpchaos.server.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where in a message a value is always redacted, whatever it looks like: a JSON pointer
 * ({@code /params/arguments/password}, exact) or a dotted glob ({@code params.arguments.*},
 * {@code result.**.token}: {@code *} is any one member name or array index, {@code **} any
 * number of them, none included). Paths start at the message's root.
 */
public final class RedactPath {

    private static final String STAR = "*";
    private static final String STARS = "**";

    private final String text;
    private final List<String> segments;

    private RedactPath(String text, List<String> segments) {
        this.text = text;
        this.segments = segments;
    }

    /**
     * Parses a path.
     *
     * @throws IllegalArgumentException naming the path and what was expected
     */
    public static RedactPath parse(String path) {
        Objects.requireNonNull(path, "path");
        List<String> segments = new ArrayList<>();
        if (path.startsWith("/")) {
            for (String segment : path.substring(1).split("/", -1)) {
                segments.add(segment.replace("~1", "/").replace("~0", "~"));
            }
            if (segments.size() == 1 && segments.get(0).isEmpty()) {
                throw invalid(path);
            }
            // A pointer is exact: its * is a member named *, so keep it apart from the glob's.
            return new RedactPath(path, segments.stream().map(s -> "=" + s).toList());
        }
        String glob = path.startsWith("$.") ? path.substring(2) : path;
        if (glob.isEmpty()) {
            throw invalid(path);
        }
        for (String segment : glob.split("\\.", -1)) {
            if (segment.isEmpty()) {
                throw invalid(path);
            }
            segments.add(segment.equals(STAR) || segment.equals(STARS) ? segment : "=" + segment);
        }
        return new RedactPath(path, List.copyOf(segments));
    }

    private static IllegalArgumentException invalid(String path) {
        return new IllegalArgumentException("redact path: '" + path + "' (expected: a JSON pointer such as "
                + "/params/arguments/token, or a dotted glob such as params.arguments.* or result.**.token)");
    }

    /** Whether the value at {@code path} (member names and array indices from the root) is covered. */
    public boolean matches(List<String> path) {
        return matches(0, path, 0);
    }

    private boolean matches(int s, List<String> path, int p) {
        if (s == segments.size()) {
            return p == path.size();
        }
        String segment = segments.get(s);
        if (segment.equals(STARS)) {
            for (int skip = p; skip <= path.size(); skip++) {
                if (matches(s + 1, path, skip)) {
                    return true;
                }
            }
            return false;
        }
        if (p == path.size()) {
            return false;
        }
        boolean here = segment.equals(STAR) || segment.substring(1).equals(path.get(p));
        return here && matches(s + 1, path, p + 1);
    }

    @Override
    public String toString() {
        return text;
    }
}
