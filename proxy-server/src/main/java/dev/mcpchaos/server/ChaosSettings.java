package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.record.Recording;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The chaos settings of one proxy, on either transport: each option of {@link ChaosBuilder}
 * declared once, here, with its default. What is written here is already valid: the public
 * setters of {@link AbstractChaosBuilder} check a value before they set it (with the house
 * message, {@code "name: value (expected: ...)"}), and they are the only writers.
 * {@link ChaosRuntime} reads them when the proxy starts; nothing here runs.
 *
 * <p>To add an option: a field here with its default, a setter on {@link ChaosBuilder} (its
 * Javadoc is the reference) implemented in {@link AbstractChaosBuilder}, the use in
 * {@link ChaosRuntime}, and the command line's option mapped in {@code ChaosOptions.applyTo}.
 */
final class ChaosSettings {

    final List<FrameInterceptor> extra = new ArrayList<>();
    final List<FaultListener> faultListeners = new ArrayList<>();
    /** Characters of each message the traffic log shows; -1: no traffic log. */
    int trafficChars = -1;
    /** Null: no rules (the engine starts empty, so rules can be added while running). */
    RuleSet rules;
    /** The file {@link #rules} came from, or null. */
    Path rulesFile;
    boolean watchRules = true;
    /** Null: the rule file's, else generated. */
    Long seed;
    /** Null: {@code given} when a seed was set. */
    String seedSource;
    /** Null: none, or a Prometheus one made at start when a listener needs one. */
    MeterRegistry registry;
    /** Null: no control API. */
    InetSocketAddress control;
    String controlToken;
    /**
     * Null for the control server's defaults. Not read from {@code ControlServer} here: its class
     * initialization builds a JSON mapper (jackson-databind's first, with its date formats and
     * locale data), which cost a stdio proxy with no control endpoint 20-40 ms of start-up.
     */
    Duration controlHeadTimeout;
    Duration controlBodyTimeout;
    /** Null: no operations listener. */
    InetSocketAddress operations;
    /** Null: no event log (unless the control API keeps its ring of recent events). */
    OutputStream eventsOut;
    boolean closeEventsOut;
    int journalCapacity = JournalRing.DEFAULT_CAPACITY;
    boolean journalContent;
    /** Null: no recording. */
    Recording recording;
    /** Null: no checks. */
    Referee referee;
    /** The variables a stdio server is given on top of what it inherits: a recording's redaction looks there too. */
    final Map<String, String> serverVariables = new LinkedHashMap<>();

    /** Where the run's seed came from: as set, else given, from the rule file, or generated. */
    String seedSource() {
        if (seed != null) {
            return seedSource != null ? seedSource : "given";
        }
        return rules != null && rules.seed().isPresent() ? "file" : "generated";
    }

    /** {@code capacity} if it is a journal's capacity in entries, 0 for off. */
    static int requireJournalCapacity(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("journal capacity: " + capacity + " (expected: >= 1, or 0 for off)");
        }
        return capacity;
    }

    /** {@code token} if it can be a bearer token. */
    static String requireToken(String token) {
        Objects.requireNonNull(token, "token");
        if (token.isBlank()) {
            throw new IllegalArgumentException("control token: '' (expected: a secret that is not empty)");
        }
        return token;
    }

    /** {@code timeout} if it is longer than zero. */
    static Duration requirePositive(Duration timeout, String name) {
        Objects.requireNonNull(timeout, name);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException(name + ": " + timeout + " (expected: > 0)");
        }
        return timeout;
    }
}
