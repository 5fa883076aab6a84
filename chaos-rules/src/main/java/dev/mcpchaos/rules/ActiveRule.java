package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.Fault;
import dev.mcpchaos.rules.match.MessageMatch;
import io.netty.util.concurrent.Ticker;

import java.time.Duration;
import java.util.SplittableRandom;

/** An enabled rule inside an engine: its match, its time window, its counters and its random source. */
final class ActiveRule {

    private final Rule rule;
    private final MessageMatch match;
    private final Fault fault;
    private final boolean windowed;
    private final long activeFrom;
    private final long activeNanos;
    private final double probability;
    private final long after;
    private final long times;
    private final SplittableRandom random;
    private long matched;
    private long injected;

    ActiveRule(Rule rule, long seed, long engineStartNanos) {
        this.rule = rule;
        this.match = rule.match();
        this.fault = rule.fault();
        this.activeFrom = engineStartNanos + rule.start().toNanos();
        this.activeNanos = rule.duration().map(Duration::toNanos).orElse(Long.MAX_VALUE);
        this.windowed = !rule.start().isZero() || rule.duration().isPresent();
        this.probability = rule.probability();
        this.after = rule.after();
        this.times = rule.timesOrMax();
        this.random = new SplittableRandom(seed);
    }

    Rule rule() {
        return rule;
    }

    Fault fault() {
        return fault;
    }

    /**
     * Whether the rule picks this frame now: the match accepts the message as it arrived
     * ({@code envelope}, {@code method}, {@code tool}), the fault can act on the frame as it is
     * and on this transport, and the rule is in its time window. Looks at envelopes only;
     * allocates nothing.
     */
    boolean picks(Frame frame, Envelope envelope, String method, String tool, TransportKind transport,
                  Ticker ticker) {
        if (!match.matches(frame.direction(), envelope, method, tool, transport) || !match.headersMatch(frame)
                || !fault.supports(transport) || !fault.canApply(frame)) {
            return false;
        }
        if (!windowed) {
            return true;
        }
        long sinceStart = ticker.nanoTime() - activeFrom; // difference first: nanoTime may wrap
        return sinceStart >= 0 && sinceStart < activeNanos;
    }

    /**
     * Counts a match and decides whether to inject: past {@code after}, under {@code times}, and
     * by {@code probability}. Synchronized because sessions on other executors share the rule.
     *
     * @return the random source for this injection (a split of the rule's), or null to let the
     *         message pass
     */
    synchronized SplittableRandom decide() {
        matched++;
        if (matched <= after || injected >= times) {
            return null;
        }
        if (probability < 1.0 && random.nextDouble() >= probability) {
            return null;
        }
        injected++;
        return random.split();
    }

    /**
     * The injection {@link #decide} allowed did not happen (the fault had nothing to do): it does
     * not count as injected, so it uses up none of {@code times}. The match still counts.
     */
    synchronized void giveBack() {
        injected--;
    }

    /** The counters now. */
    synchronized RuleStats stats() {
        return new RuleStats(rule.name(), true, fault.type(), matched, injected);
    }
}
