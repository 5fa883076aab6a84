package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.ConnectionHttpActions;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Applies a {@link RuleSet} to the traffic: the {@link FrameInterceptor} the chaos rules plug
 * into a proxy with.
 *
 * <pre>{@code
 * RuleEngine engine = RuleEngine.builder(RuleSet.load(Path.of("rules.yaml")))
 *         .seed(42)                          // else the file's seed, else a fresh one (logged)
 *         .transport(TransportKind.STDIO)    // refuses rules that cannot work there
 *         .listener(events::add)
 *         .build();
 * }</pre>
 *
 * <h2>How rules apply</h2>
 * Every enabled rule whose match accepts a message applies, in file order. For each, in turn:
 * the message counts as a match; the first {@code after} matches pass untouched; once the rule
 * injected {@code times} times it stops; otherwise it injects with {@code probability}. A fault
 * that ends the message (drop, error, disconnect, ...) ends the chain; a fault that hands it on
 * (latency, noise, ...) lets the next matching rule see it, possibly later. Rules are active
 * from {@code start} after the engine was built, for {@code duration}.
 *
 * <h2>Order</h2>
 * Per session and direction, messages leave in the order they arrived: a message held by a
 * fault (latency, throttle) holds back the ones behind it. Only faults whose job is to break the
 * order ({@code reorder}) let later messages overtake.
 *
 * <h2>Randomness</h2>
 * Each rule draws from its own {@link SplittableRandom}, seeded from the run's seed and
 * a stable hash of the rule's name, and each injection gets its own split of it. The same seed and
 * the same traffic give the same decisions; adding, removing or reordering other rules does not
 * change a rule's draws.
 *
 * <h2>Cost</h2>
 * A message no rule matches, while nothing is held, costs a look at its envelope per rule: no
 * parsing, no copying, no allocation. Only a fault that rewrites a message parses it.
 *
 * <h2>Events</h2>
 * Every injection is a {@link FaultEvent}, given to the listeners and logged at INFO, one line
 * each, on the logger {@code faults}.
 *
 * <p>One engine may serve many sessions (and executors): its per-rule counters are shared, so
 * {@code times: 3} means three times in all.
 */
public final class RuleEngine implements FrameInterceptor {

    private static final Logger faultLog = LoggerFactory.getLogger("faults");

    private final RuleSet ruleSet;
    private final long seed;
    private final ActiveRule[] rules;
    private final Ticker ticker;
    private final long startNanos;
    private final List<FaultListener> listeners;
    private final HttpFaultActions http;
    private final AtomicLong eventCount = new AtomicLong();
    /** Messages held in any session's ordered output; while 0, no lookup is needed. */
    private final AtomicInteger heldMessages = new AtomicInteger();
    /**
     * Per chain: a chain's context lives as long as the chain, so its state goes with it. The
     * state must not hold the context itself (only messages in flight do), or the weak key
     * would never be cleared.
     */
    private final Map<InterceptorContext, SessionState> sessions = Collections.synchronizedMap(new WeakHashMap<>());

    private RuleEngine(Builder b, long seed) {
        this.ruleSet = b.rules;
        this.seed = seed;
        this.ticker = b.ticker;
        this.startNanos = ticker.nanoTime();
        this.listeners = List.copyOf(b.listeners);
        this.http = b.http;
        List<ActiveRule> active = new ArrayList<>();
        for (Rule rule : ruleSet.rules()) {
            if (rule.enabled()) {
                active.add(new ActiveRule(rule, active.size(), seed ^ stableHash(rule.name()), startNanos));
            }
        }
        this.rules = active.toArray(new ActiveRule[0]);
    }

    /** A builder for an engine applying {@code rules}. */
    public static Builder builder(RuleSet rules) {
        return new Builder(rules);
    }

    /** The seed this engine draws from: given, from the file, or generated. */
    public long seed() {
        return seed;
    }

    public RuleSet ruleSet() {
        return ruleSet;
    }

    @Override
    public void onFrame(InterceptorContext ctx, Frame frame) {
        int first = firstMatch(0, ctx.transport(), frame, frame.envelope(), frame.method(), frame.toolName());
        if (first < 0 && heldMessages.get() == 0) {
            ctx.forward(frame); // the common case: nothing to do, nothing waiting
            return;
        }
        DirectionOutput out = session(ctx).output(frame.direction());
        if (first < 0 && out.isEmpty()) {
            ctx.forward(frame);
            return;
        }
        out.open(ctx, frame).run(first < 0 ? rules.length : first, frame);
    }

    /**
     * The index of the first rule from {@code from} that picks this frame now, or -1; the match
     * is on the message as it arrived (see {@link ActiveRule#picks}).
     */
    int firstMatch(int from, TransportKind transport, Frame frame, Envelope envelope,
                   String method, String tool) {
        for (int i = from; i < rules.length; i++) {
            if (rules[i].picks(frame, envelope, method, tool, transport, ticker)) {
                return i;
            }
        }
        return -1;
    }

    ActiveRule rule(int index) {
        return rules[index];
    }

    int ruleCount() {
        return rules.length;
    }

    HttpFaultActions http() {
        return http;
    }

    private SessionState session(InterceptorContext ctx) {
        SessionState state = sessions.get(ctx);
        if (state == null) {
            state = sessions.computeIfAbsent(ctx, c -> new SessionState(this, rules.length));
        }
        return state;
    }

    /** How many chains the engine keeps state for; for tests of cleanup. */
    int sessionCount() {
        return sessions.size();
    }

    AtomicInteger heldMessages() {
        return heldMessages;
    }

    /** Numbers, timestamps, logs and hands out one event. */
    void publish(InterceptorContext ctx, Injection injection) {
        FaultEvent event = new FaultEvent(eventCount.incrementAndGet(), Duration.ofNanos(ticker.nanoTime() - startNanos),
                ctx.session().id(), injection.direction(), injection.rule().rule().name(),
                injection.rule().rule().fault().type(), injection.kind(), injection.id(), injection.method(),
                injection.tool(), injection.detailText());
        faultLog.info("{}", event);
        for (FaultListener listener : listeners) {
            try {
                listener.onFault(event);
            } catch (RuntimeException e) {
                faultLog.warn("fault listener {} failed on {}", listener, event, e);
            }
        }
    }

    /**
     * A hash of a rule's name that is the same on every JVM and run (FNV-1a over UTF-8, then
     * mixed), unlike {@link String#hashCode()} which is stable but weak, or identity hashes.
     */
    static long stableHash(String name) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        hash ^= hash >>> 33;
        hash *= 0xff51afd7ed558ccdL;
        hash ^= hash >>> 33;
        hash *= 0xc4ceb9fe1a85ec53L;
        hash ^= hash >>> 33;
        return hash;
    }

    @Override
    public String toString() {
        return "RuleEngine(" + ruleSet.source() + ", " + rules.length + " active rules, seed " + seed + ')';
    }

    /** Configures a {@link RuleEngine}. */
    public static final class Builder {
        private final RuleSet rules;
        private Long seed;
        private TransportKind transport;
        private Ticker ticker = Ticker.systemTicker();
        private final List<FaultListener> listeners = new ArrayList<>();
        private HttpFaultActions http = ConnectionHttpActions.INSTANCE;

        private Builder(RuleSet rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
        }

        /** The seed; overrides the file's. Without either, one is generated and logged. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * The transport the engine will run on: rules whose fault or match cannot work there are
         * refused by {@link #build()}.
         */
        public Builder transport(TransportKind transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * The clock for {@code start}, {@code duration} and event times; default the system's.
         * Give the chain's executor's ticker (for tests, an {@code EmbeddedChannel}'s) so that time
         * windows and delays run on the same, possibly virtual, time.
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /** Adds a listener told about every injected fault. */
        public Builder listener(FaultListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** What HTTP-only faults may do to the exchange; given by the HTTP transport. */
        public Builder httpActions(HttpFaultActions http) {
            this.http = Objects.requireNonNull(http, "http");
            return this;
        }

        /**
         * Builds the engine and logs the seed it uses. The engine's clock starts now: a rule's
         * {@code start} counts from here.
         *
         * @throws RuleFileException when a rule cannot work on the {@link #transport} given
         */
        public RuleEngine build() {
            if (transport != null) {
                rules.checkTransport(transport);
            }
            long chosen;
            String origin;
            OptionalLong fromFile = rules.seed();
            if (seed != null) {
                chosen = seed;
                origin = "given";
            } else if (fromFile.isPresent()) {
                chosen = fromFile.getAsLong();
                origin = "from " + rules.source();
            } else {
                chosen = new SecureRandom().nextLong() & Long.MAX_VALUE;
                origin = "generated; give it as the seed to repeat this run";
            }
            RuleEngine engine = new RuleEngine(this, chosen);
            faultLog.info("chaos rules from {}: {} of {} enabled; seed {} ({})", rules.source(), engine.rules.length,
                    rules.rules().size(), chosen, origin);
            return engine;
        }
    }

    /** The rules' per-session state: one ordered output per direction, and the faults' own state. */
    static final class SessionState {
        private final DirectionOutput toServer;
        private final DirectionOutput toClient;
        private final Object[] ruleStates;

        SessionState(RuleEngine engine, int rules) {
            toServer = new DirectionOutput(engine, this);
            toClient = new DirectionOutput(engine, this);
            ruleStates = new Object[rules];
        }

        DirectionOutput output(Direction direction) {
            return direction == Direction.CLIENT_TO_SERVER ? toServer : toClient;
        }

        @SuppressWarnings("unchecked")
        <T> T ruleState(int rule, Supplier<T> initial) {
            Object state = ruleStates[rule];
            if (state == null) {
                state = Objects.requireNonNull(initial.get(), "initial state");
                ruleStates[rule] = state;
            }
            return (T) state;
        }
    }
}
