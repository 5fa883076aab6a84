package dev.mcpchaos.core.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the human units used on the command line and in rule files: durations such as
 * {@code 250ms}, {@code 2s}, {@code 1m}, {@code 1h}, and sizes such as {@code 512B},
 * {@code 64KiB}, {@code 10MiB}, {@code 1GiB} (also {@code KB}/{@code MB}/{@code GB}, powers of 1000).
 */
public final class Units {

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(B|KiB|MiB|GiB|KB|MB|GB)?");

    private Units() {
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static Duration parseDuration(String text) {
        Objects.requireNonNull(text, "text");
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("duration: '" + text + "' (expected: a number and a unit, "
                    + "such as 250ms, 2s, 1.5s, 1m, 1h)");
        }
        double amount = Double.parseDouble(m.group(1));
        double millis;
        switch (m.group(2)) {
            case "ms": millis = amount; break;
            case "s": millis = amount * 1_000; break;
            case "m": millis = amount * 60_000; break;
            default: millis = amount * 3_600_000; break;
        }
        return Duration.ofNanos(Math.round(millis * 1_000_000));
    }

    /**
     * Parses a size in bytes; a bare number is bytes.
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static long parseSize(String text) {
        Objects.requireNonNull(text, "text");
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("size: '" + text + "' (expected: a whole number and a unit, "
                    + "such as 512B, 64KiB, 10MiB, 1GiB)");
        }
        long amount = Long.parseLong(m.group(1));
        long unit;
        String suffix = m.group(2) == null ? "B" : m.group(2);
        switch (suffix) {
            case "KiB": unit = 1L << 10; break;
            case "MiB": unit = 1L << 20; break;
            case "GiB": unit = 1L << 30; break;
            case "KB": unit = 1_000L; break;
            case "MB": unit = 1_000_000L; break;
            case "GB": unit = 1_000_000_000L; break;
            default: unit = 1L; break;
        }
        try {
            return Math.multiplyExact(amount, unit);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("size: '" + text + "' (expected: at most " + Long.MAX_VALUE + " bytes)");
        }
    }
}
