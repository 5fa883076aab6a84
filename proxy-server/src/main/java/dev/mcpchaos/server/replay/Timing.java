package dev.mcpchaos.server.replay;

import java.util.Locale;

/**
 * When a replay sends what was recorded for a request: at once ({@link #NONE}, the default), at
 * the recorded delays ({@link #RECORDED}: each message the server sent for the request goes out
 * as long after the live request's arrival as it came after the recorded request), or at those
 * delays times a factor ({@link #scaled(double)}: 0.5 halves them, 2 doubles them).
 */
public final class Timing {

    /** Answers at once. */
    public static final Timing NONE = new Timing(0);
    /** Answers at the recorded delays. */
    public static final Timing RECORDED = new Timing(1);

    private static final String EXPECTED = "expected: none, recorded or scaled:F with F a number > 0, such as scaled:0.5";

    private final double factor;

    private Timing(double factor) {
        this.factor = factor;
    }

    /**
     * The recorded delays times {@code factor}.
     *
     * @throws IllegalArgumentException when {@code factor} is not a finite number above 0
     */
    public static Timing scaled(double factor) {
        if (!(factor > 0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("timing: scaled:" + factor + " (expected: a factor > 0, such as 0.5)");
        }
        return factor == 1 ? RECORDED : new Timing(factor);
    }

    /**
     * Parses {@code none}, {@code recorded} or {@code scaled:F}.
     *
     * @throws IllegalArgumentException naming the value and what was expected
     */
    public static Timing parse(String text) {
        String value = text.trim().toLowerCase(Locale.ROOT);
        if (value.equals("none")) {
            return NONE;
        }
        if (value.equals("recorded")) {
            return RECORDED;
        }
        if (value.startsWith("scaled:")) {
            try {
                double factor = Double.parseDouble(value.substring("scaled:".length()));
                if (factor > 0 && !Double.isInfinite(factor)) {
                    return scaled(factor);
                }
            } catch (NumberFormatException e) {
                // refused below, with the whole value
            }
        }
        throw new IllegalArgumentException("'" + text + "' (" + EXPECTED + ")");
    }

    /** Whether answers go out at once. */
    public boolean isNone() {
        return factor == 0;
    }

    /** What the recorded delays are multiplied by; 0 for {@link #NONE}. */
    public double factor() {
        return factor;
    }

    /** The live delay, in nanoseconds, of a message recorded {@code recordedMillis} after its request. */
    long delayNanos(double recordedMillis) {
        return isNone() || recordedMillis <= 0 ? 0 : (long) (recordedMillis * factor * 1_000_000);
    }

    @Override
    public String toString() {
        return isNone() ? "none" : factor == 1 ? "recorded" : "scaled:" + factor;
    }
}
