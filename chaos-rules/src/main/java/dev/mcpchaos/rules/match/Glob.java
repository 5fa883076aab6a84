package dev.mcpchaos.rules.match;

import java.util.Objects;

/**
 * A shell-style pattern on a whole string: {@code *} matches any run of characters (slashes
 * included), {@code ?} any one character; everything else matches itself, case-sensitively.
 * {@code tools/*}, {@code search*}, {@code *_v?}.
 *
 * <p>Matching allocates nothing: it runs for every message a rule looks at. Patterns without a
 * wildcard, or with a single trailing or leading {@code *}, take a shortcut.
 */
public final class Glob {

    private enum Shape { EXACT, PREFIX, SUFFIX, ANY, GENERAL }

    private final String pattern;
    private final Shape shape;
    private final String literal;

    private Glob(String pattern) {
        this.pattern = pattern;
        int stars = count(pattern, '*');
        boolean question = pattern.indexOf('?') >= 0;
        if (pattern.equals("*")) {
            shape = Shape.ANY;
            literal = "";
        } else if (stars == 0 && !question) {
            shape = Shape.EXACT;
            literal = pattern;
        } else if (stars == 1 && !question && pattern.endsWith("*")) {
            shape = Shape.PREFIX;
            literal = pattern.substring(0, pattern.length() - 1);
        } else if (stars == 1 && !question && pattern.startsWith("*")) {
            shape = Shape.SUFFIX;
            literal = pattern.substring(1);
        } else {
            shape = Shape.GENERAL;
            literal = pattern;
        }
    }

    /** A glob for {@code pattern}. */
    public static Glob of(String pattern) {
        return new Glob(Objects.requireNonNull(pattern, "pattern"));
    }

    /** The one text this glob matches when it has no wildcard, else null. */
    public String exactText() {
        return shape == Shape.EXACT ? literal : null;
    }

    /** Whether {@code text} matches the whole pattern; null never matches. */
    public boolean matches(String text) {
        if (text == null) {
            return false;
        }
        switch (shape) {
            case ANY:
                return true;
            case EXACT:
                return literal.equals(text);
            case PREFIX:
                return text.startsWith(literal);
            case SUFFIX:
                return text.endsWith(literal);
            default:
                return matchesGeneral(text);
        }
    }

    /** Iterative wildcard match with one backtrack point: linear in practice, no allocation. */
    private boolean matchesGeneral(String text) {
        int p = 0;
        int t = 0;
        int star = -1;
        int resume = 0;
        while (t < text.length()) {
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == text.charAt(t))) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                resume = t;
            } else if (star >= 0) {
                p = star + 1;
                t = ++resume;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }

    private static int count(String s, char c) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == c) {
                n++;
            }
        }
        return n;
    }

    /** The pattern as written. */
    public String pattern() {
        return pattern;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Glob && ((Glob) o).pattern.equals(pattern);
    }

    @Override
    public int hashCode() {
        return pattern.hashCode();
    }

    @Override
    public String toString() {
        return pattern;
    }
}
