package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.record.Recording;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.OutputStream;
import java.net.InetSocketAddress;

import java.nio.file.Path;
import java.time.Duration;

/**
 * What every proxy builder offers beyond its transport: rules and their seed, the traffic log,
 * the event log, metrics and the control endpoint, and interceptors of one's own.
 *
 * @param <B> the builder itself, so calls chain
 */
public interface ChaosBuilder<B extends ChaosBuilder<B>> {

    /** Logs every message on stderr with up to {@code maxChars} of it (0: none); -1 turns it off. */
    B logTraffic(int maxChars);

    /**
     * Applies the chaos rules of a rule file (YAML, or JSON for {@code .json}), loaded now. While
     * the proxy runs the file is watched (unless {@link #watchRules watchRules(false)}): a valid
     * edit replaces the rules at once; an invalid one is logged and the rules in force stay.
     */
    B rules(Path file);

    /** Whether to reload the {@link #rules(Path) rule file} when it changes; default true. */
    B watchRules(boolean watch);

    /** Applies these chaos rules. */
    B rules(RuleSet rules);

    /** The seed of every random choice the rules make; overrides the rule file's. Default: generated and logged. */
    B seed(long seed);

    /** The seed, and where it came from, shown as {@code seed_source} on the control API's {@code /status}. */
    B seed(long seed, String source);

    /**
     * Serves the operations listener ({@code /metrics}, {@code /health}, {@code /ready}; see
     * {@code docs/operations.md}) on {@code address}; default: off. Read-only, so it needs no token.
     */
    B operations(InetSocketAddress address);

    /** Told about every fault the rules inject (on an event loop: do not block). */
    B faultListener(FaultListener listener);

    /** Adds an interceptor after the built-in ones. */
    B interceptor(FrameInterceptor interceptor);

    /** Publishes the proxy's meters (see {@code docs/metrics.md}) to this registry; default: none. */
    B metrics(MeterRegistry registry);

    /** Writes the event log (see {@code docs/events.md}) to {@code out}; closing the proxy closes it if asked. */
    B events(OutputStream out, boolean closeOut);

    /**
     * Serves the control API (see {@code docs/control-api.md}: health, status, metrics, the rules,
     * the panic switch, recent events) on {@code address}; default: off. Beyond loopback it needs
     * a {@link #controlToken token}.
     */
    B control(InetSocketAddress address);

    /** The bearer token the control API asks of every request (but {@code GET|HEAD /health}); default: none. */
    B controlToken(String token);

    /** Time the control API gives a request's head from its first byte (then 408); default 10 s. */
    B controlHeadTimeout(Duration timeout);

    /**
     * Time the control API gives a request's body from the end of its head (then 408), and a
     * client to read the answers it left unread (then a close); default 30 s.
     */
    B controlBodyTimeout(Duration timeout);

    /** Keeps a journal of at most {@code capacity} messages; 0 turns it off (see {@code docs/journal.md}). */
    B journal(int capacity);

    /**
     * Records every message both ways into a cassette (see {@code docs/record-replay.md}): a file,
     * or a directory with one file per session when {@code target} is one or ends with {@code /}.
     * Secrets are taken out before anything is written.
     */
    default B record(Path target) {
        return record(Recording.to(target));
    }

    /** Records as {@code recording} says: where, before or after the faults, and what to redact. */
    B record(Recording recording);

    /**
     * Puts {@code referee} on the chain as an observer, first, before the rules: it checks every
     * message against the protocol's contract (see {@code docs/checks.md}) and never changes one.
     * Read what it found with {@link Referee#report()} while the proxy runs; closing the proxy
     * checks what is queued and reports the requests left unanswered.
     */
    B check(Referee referee);
}
