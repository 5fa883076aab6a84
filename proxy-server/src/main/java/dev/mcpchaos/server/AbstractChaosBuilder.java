package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.record.Recording;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * What both proxy builders share: the {@link ChaosBuilder} settings, checked here and kept in one
 * {@link ChaosSettings}, from which the transport's builder starts a {@link ChaosRuntime}. Only
 * the builders of this package extend it.
 *
 * @param <B> the builder itself, so calls chain
 */
public abstract class AbstractChaosBuilder<B extends AbstractChaosBuilder<B>> implements ChaosBuilder<B> {

    final ChaosSettings settings = new ChaosSettings();

    AbstractChaosBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** Logs every message on stderr with up to {@code maxChars} of it (0: none); -1 turns it off. */
    @Override
    public B logTraffic(int maxChars) {
        settings.trafficChars = maxChars;
        return self();
    }

    /** Adds an interceptor after the built-in ones. */
    @Override
    public B interceptor(FrameInterceptor interceptor) {
        settings.extra.add(Objects.requireNonNull(interceptor, "interceptor"));
        return self();
    }

    /**
     * Applies the chaos rules of a rule file (YAML, or JSON for {@code .json}), loaded now, and
     * watched while the proxy runs unless {@link #watchRules watchRules(false)}.
     *
     * @throws RuleFileException when the file cannot be read or is not valid; its message names
     *                           the file, the rule and the field
     */
    @Override
    public B rules(Path file) {
        settings.rules = RuleSet.load(file);
        settings.rulesFile = file;
        return self();
    }

    /** Applies these chaos rules. */
    @Override
    public B rules(RuleSet rules) {
        settings.rules = Objects.requireNonNull(rules, "rules");
        settings.rulesFile = null;
        return self();
    }

    /** The seed of every random choice the rules make; overrides the rule file's. Default: generated and logged. */
    @Override
    public B seed(long seed) {
        settings.seed = seed;
        return self();
    }

    /** Told about every fault the rules inject, on the session's executor: do not block. */
    @Override
    public B faultListener(FaultListener listener) {
        settings.faultListeners.add(Objects.requireNonNull(listener, "listener"));
        return self();
    }

    /** Publishes the proxy's meters (see {@code docs/metrics.md}) to this registry; default: none. */
    @Override
    public B metrics(MeterRegistry registry) {
        settings.registry = Objects.requireNonNull(registry, "registry");
        return self();
    }

    /**
     * Writes the event log (one JSON line per injected fault, session start and end, parse error,
     * limit breach, upstream failure and rule change; never a message's content) to {@code out};
     * default: none.
     *
     * @param closeOut whether closing the proxy closes {@code out} (a file: yes; stderr: no)
     */
    @Override
    public B events(OutputStream out, boolean closeOut) {
        settings.eventsOut = Objects.requireNonNull(out, "out");
        settings.closeEventsOut = closeOut;
        return self();
    }

    /**
     * Serves the control API (see {@code docs/control-api.md}) on {@code address} (port 0: any
     * free port); default: off. The {@link #metrics} registry must then be a Prometheus one;
     * without one, a Prometheus registry with the JVM and Netty meters is made. Beyond loopback
     * it needs a {@link #controlToken token}. Stopped when the proxy is closed.
     */
    @Override
    public B control(InetSocketAddress address) {
        settings.control = Objects.requireNonNull(address, "address");
        return self();
    }

    /**
     * Serves the operations listener (see {@code docs/operations.md}: {@code /metrics},
     * {@code /health}, {@code /ready}; read-only, no token) on {@code address} (port 0: any free
     * port); default: off. The {@link #metrics} registry must then be a Prometheus one; without
     * one, a Prometheus registry with the JVM and Netty meters is made (the control API's, when
     * both are on). Stopped when the proxy is closed.
     */
    @Override
    public B operations(InetSocketAddress address) {
        settings.operations = Objects.requireNonNull(address, "address");
        return self();
    }

    /** The seed, and where it came from for {@code /status}'s {@code seed_source} (such as {@code env:POD_NAME}). */
    @Override
    public B seed(long seed, String source) {
        settings.seed = seed;
        settings.seedSource = Objects.requireNonNull(source, "source");
        return self();
    }

    /** Whether to reload the {@link #rules(Path) rule file} when it changes; default true. */
    @Override
    public B watchRules(boolean watch) {
        settings.watchRules = watch;
        return self();
    }

    /** The bearer token the control API asks of every request but {@code GET|HEAD /health}; default: none. */
    @Override
    public B controlToken(String token) {
        settings.controlToken = ChaosSettings.requireToken(token);
        return self();
    }

    /**
     * Time the control API gives a request's head, from its first byte; then 408 and a close.
     * Default 10 s.
     */
    @Override
    public B controlHeadTimeout(Duration timeout) {
        settings.controlHeadTimeout = ChaosSettings.requirePositive(timeout, "control head timeout");
        return self();
    }

    /**
     * Time the control API gives a request's body, from the end of its head, and a client to
     * start reading answers it leaves unread; then 408 (a close for the unread answers). Default 30 s.
     */
    @Override
    public B controlBodyTimeout(Duration timeout) {
        settings.controlBodyTimeout = ChaosSettings.requirePositive(timeout, "control body timeout");
        return self();
    }

    /**
     * Keeps a journal of at most {@code capacity} messages (see {@code docs/journal.md}), the
     * oldest dropped and counted; 0 turns it off. Default: on, {@value
     * dev.mcpchaos.rules.journal.JournalRing#DEFAULT_CAPACITY} entries.
     *
     * @throws IllegalArgumentException when {@code capacity} is negative
     */
    @Override
    public B journal(int capacity) {
        settings.journalCapacity = ChaosSettings.requireJournalCapacity(capacity);
        return self();
    }

    /** Whether journal entries keep each message's JSON text; default false (no content). */
    public B journalContent(boolean keep) {
        settings.journalContent = keep;
        return self();
    }

    /** Records as {@code recording} says; see {@link ChaosBuilder#record(Recording)}. */
    @Override
    public B record(Recording recording) {
        settings.recording = Objects.requireNonNull(recording, "recording");
        return self();
    }

    /** Checks the traffic; see {@link ChaosBuilder#check(Referee)}. */
    @Override
    public B check(dev.mcpchaos.server.check.Referee referee) {
        settings.referee = Objects.requireNonNull(referee, "referee");
        return self();
    }
}
