package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.ConnectionHttpActions;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import dev.mcpchaos.rules.fault.PrimingDropFault;
import dev.mcpchaos.rules.match.Glob;
import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

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
 * <h2>Changes while running</h2>
 * {@link #update}, {@link #replace} and the panic switch {@link #faultsEnabled(boolean, String)}
 * swap the rules in force whole: each message meets one consistent set of rules, from the next
 * message on, and a message a fault already holds finishes with the rules it met. Reading the
 * rules costs a message one volatile read.
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

    /** The run's seed; changed only by {@link #reset(String, long)}, under {@link #changes}. */
    private volatile long seed;
    private final TransportKind transport;
    /** The rules in force; replaced whole by a change, read once per message. */
    private volatile RuleTable table;
    private final Object changes = new Object();
    private final Ticker ticker;
    private final long startNanos;
    private final List<FaultListener> listeners;
    private final List<RulesListener> rulesListeners;
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
    /** The rules it was built with, what {@link #reset} goes back to. */
    private final RuleSet initialRules;
    private final Chaos chaos = new EngineChaos(this);

    private RuleEngine(Builder b, long seed) {
        this.seed = seed;
        this.transport = b.transport;
        this.ticker = b.ticker;
        this.startNanos = ticker.nanoTime();
        this.listeners = List.copyOf(b.listeners);
        this.rulesListeners = List.copyOf(b.rulesListeners);
        this.http = b.http;
        this.table = RuleTable.of(b.rules, null, true, this);
        this.initialRules = b.rules;
    }

    /** A builder for an engine applying {@code rules}. */
    public static Builder builder(RuleSet rules) {
        return new Builder(rules);
    }

    /** The seed this engine draws from: given, from the file, or generated. */
    public long seed() {
        return seed;
    }

    /** The rules in force now, enabled or not, in order. */
    public RuleSet ruleSet() {
        return table.ruleSet;
    }

    /**
     * Changes the rules, atomically: {@code change} gets the rules in force and returns the new
     * ones, which the next message meets. Changes run one at a time, so a change computed from
     * the current rules (add one, patch one) never loses another made at the same time.
     * Messages already in the rules' hands (held by a latency, in a reorder window) finish with
     * the rules they started with. A rule that is the same before and after (same name, same
     * definition) keeps its counters ({@code after}, {@code times}) and its random draws; a new
     * or changed one starts afresh. The seed stays the run's: a seed in the new rules is ignored.
     *
     * @param cause what made the change, for the log and the listeners, such as {@code PUT /rules}
     * @return the rules now in force
     * @throws RuleFileException when a new rule cannot work on this engine's transport (the
     *         rules in force stay); anything {@code change} throws is passed on, nothing changed
     */
    public RuleSet update(String cause, UnaryOperator<RuleSet> change) {
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(change, "change");
        RuleTable now;
        synchronized (changes) {
            RuleTable old = table;
            RuleSet next = Objects.requireNonNull(change.apply(old.ruleSet), "the changed rules");
            if (transport != null) {
                next.checkTransport(transport);
            }
            now = RuleTable.of(next, old, old.faultsEnabled, this);
            table = now;
            tellRulesListeners(cause, now);
        }
        faultLog.info("rules changed ({}): {} of {} enabled{}; seed {}", cause, now.all.length,
                now.ruleSet.rules().size(), now.faultsEnabled ? "" : "; faults are off", seed);
        return now.ruleSet;
    }

    /** Replaces every rule; see {@link #update}. */
    public RuleSet replace(RuleSet rules, String cause) {
        Objects.requireNonNull(rules, "rules");
        return update(cause, old -> rules);
    }

    /**
     * The panic switch: with {@code false}, no rule picks any message from the next one on (the
     * rules stay, and so do their counters); {@code true} turns them back on. Messages a fault
     * already holds still complete.
     *
     * @return whether this changed anything
     */
    public boolean faultsEnabled(boolean enabled, String cause) {
        Objects.requireNonNull(cause, "cause");
        synchronized (changes) {
            RuleTable old = table;
            if (old.faultsEnabled == enabled) {
                return false;
            }
            table = RuleTable.of(old.ruleSet, old, enabled, this);
            tellRulesListeners(cause, table);
        }
        faultLog.info("faults turned {} ({})", enabled ? "on" : "off", cause);
        return true;
    }

    /**
     * Back to the rules the engine was built with, faults on, and every rule's counters and random
     * draws started afresh (as for a new rule), atomically for the next message. Messages a fault
     * already holds still complete. {@code start} and {@code duration} still count from when the
     * engine was built.
     *
     * @param cause what made the change, for the log and the listeners
     */
    public void reset(String cause) {
        reset(cause, seed);
    }

    /**
     * {@link #reset(String)}, drawing from {@code seed} from now on: what a test fixture does
     * before each test, so that each test has a seed of its own (and can be repeated with it)
     * while the proxy lives on.
     *
     * @param cause what made the change, for the log and the listeners
     * @param seed the seed of every random choice from the next message on
     */
    public void reset(String cause, long seed) {
        Objects.requireNonNull(cause, "cause");
        RuleTable now;
        synchronized (changes) {
            this.seed = seed;
            now = RuleTable.of(initialRules, null, true, this);
            table = now;
            tellRulesListeners(cause, now);
        }
        faultLog.info("rules reset ({}): {} of {} enabled; seed {}", cause, now.all.length,
                now.ruleSet.rules().size(), seed);
    }

    /**
     * This engine's rules to steer from code: add one ({@link Rules}), switch it, remove it, the
     * panic switch, {@link Chaos#reset()}.
     */
    public Chaos chaos() {
        return chaos;
    }

    /** Whether faults are on (see {@link #faultsEnabled(boolean, String)}). */
    public boolean faultsEnabled() {
        return table.faultsEnabled;
    }

    /** Each rule in force, in order, with how often it matched and injected since it was last changed. */
    public List<RuleStats> stats() {
        RuleTable t = table;
        List<RuleStats> stats = new ArrayList<>(t.ruleSet.rules().size());
        int next = 0;
        for (Rule rule : t.ruleSet.rules()) {
            if (rule.enabled()) {
                ActiveRule active = t.all[next++];
                stats.add(active.stats());
            } else {
                stats.add(new RuleStats(rule.name(), false, rule.fault().type(), 0, 0));
            }
        }
        return stats;
    }

    /** How long ago the engine was built, on its ticker. */
    public Duration uptime() {
        return Duration.ofNanos(ticker.nanoTime() - startNanos);
    }

    private void tellRulesListeners(String cause, RuleTable now) {
        for (RulesListener listener : rulesListeners) {
            try {
                listener.rulesChanged(cause, now.ruleSet, now.faultsEnabled);
            } catch (RuntimeException e) {
                faultLog.warn("rules listener {} failed", listener, e);
            }
        }
    }

    @Override
    public void onFrame(InterceptorContext ctx, Frame frame) {
        RuleTable rules = table;
        int first = rules.firstMatch(0, ctx.transport(), frame, frame.envelope(), frame.method(), frame.toolName(),
                ticker);
        if (first < 0 && heldMessages.get() == 0) {
            ctx.forward(frame); // the common case: nothing to do, nothing waiting
            return;
        }
        DirectionOutput out = session(ctx).output(frame.direction());
        if (first < 0 && out.isEmpty()) {
            ctx.forward(frame);
            return;
        }
        out.open(ctx, frame, rules).run(first < 0 ? rules.active.length : first, frame);
    }

    /**
     * Whether a rule may pick a message now, or a fault still holds one: while there are no
     * rules (or faults are off) and nothing is held, every message would pass untouched, and the
     * transport need not make messages of its bytes. Any rule counts, whatever its direction: a
     * rule on requests may answer in the other direction, and a rule on responses needs their
     * requests correlated.
     */
    @Override
    public boolean inspects(TransportKind transport, Direction direction) {
        return table.active.length > 0 || heldMessages.get() > 0;
    }

    /**
     * Whether an active rule removes priming events ({@code priming_drop}): only then does the
     * transport hold an SSE stream's leading message-less events for its first message.
     */
    @Override
    public boolean holdsLeadingEvents(TransportKind transport) {
        return table.holdsLeadingEvents;
    }

    /** Runs {@code done} once this session's messages of {@code direction} held by faults have left. */
    @Override
    public void onInputEnd(InterceptorContext ctx, Direction direction, Runnable done) {
        SessionState state = sessions.get(ctx);
        if (state == null) {
            done.run();
        } else {
            state.output(direction).whenIdle(done);
        }
    }

    /**
     * Runs {@code done} once this session's messages of {@code route} and {@code direction} held
     * by faults have left: the end of an SSE answer waits for the answer a latency holds.
     */
    @Override
    public void onRouteEnd(InterceptorContext ctx, Direction direction, Object route, Runnable done) {
        SessionState state = sessions.get(ctx);
        if (state == null) {
            done.run();
        } else {
            state.output(direction).whenRouteClear(route, done);
        }
    }

    Ticker ticker() {
        return ticker;
    }

    HttpFaultActions http() {
        return http;
    }

    private SessionState session(InterceptorContext ctx) {
        SessionState state = sessions.get(ctx);
        if (state == null) {
            state = sessions.computeIfAbsent(ctx, c -> new SessionState(this));
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
                injection.tool(), injection.detailText(), injection.argumentsSha256());
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
        RuleTable t = table;
        return "RuleEngine(" + t.ruleSet.source() + ", " + t.active.length + " active rules, seed " + seed + ')';
    }

    /** Configures a {@link RuleEngine}. */
    public static final class Builder {
        private final RuleSet rules;
        private Long seed;
        private TransportKind transport;
        private Ticker ticker = Ticker.systemTicker();
        private final List<FaultListener> listeners = new ArrayList<>();
        private final List<RulesListener> rulesListeners = new ArrayList<>();
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

        /** Adds a listener told about every change of the rules and of the panic switch. */
        public Builder rulesListener(RulesListener listener) {
            rulesListeners.add(Objects.requireNonNull(listener, "listener"));
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
                // Needs to differ between runs, not to be secret: SecureRandom's provider set-up cost
                // ~0.1 s of every proxy's start-up. SplittableRandom seeds from the clock, mixed.
                chosen = new SplittableRandom().nextLong() & Long.MAX_VALUE;
                origin = "generated; give it as the seed to repeat this run";
            }
            RuleEngine engine = new RuleEngine(this, chosen);
            if (rules.rules().isEmpty()) {
                // A proxy without rules (they may come later, through the control API) says nothing;
                // the seed is logged with the first change.
                faultLog.debug("no chaos rules yet; seed {} ({})", chosen, origin);
            } else {
                faultLog.info("chaos rules from {}: {} of {} enabled; seed {} ({})", rules.source(),
                        engine.table.all.length, rules.rules().size(), chosen, origin);
            }
            return engine;
        }
    }

    /**
     * The rules in force at one moment: every rule, the enabled ones as {@link ActiveRule}s (whose
     * positions here are the indexes a message's flow walks), and the panic switch. Immutable; a
     * message keeps the table it met first until it leaves.
     */
    static final class RuleTable {
        final RuleSet ruleSet;
        /** One per enabled rule, in order. */
        final ActiveRule[] all;
        /** The rules that may pick a message: {@link #all}, or none while faults are off. */
        final ActiveRule[] active;
        final boolean faultsEnabled;
        /** Whether an active rule removes priming events: the transport then holds them for the first message. */
        final boolean holdsLeadingEvents;
        /**
         * For each method an active rule names exactly (no wildcard): the indices of the active
         * rules that may pick a message with that method, in order. A message is looked at only
         * by the rules that name its method or no method exactly, so rules keyed on other methods
         * cost it nothing (most rules name a method).
         */
        private final Map<String, int[]> candidatesByMethod;
        /** The indices of the active rules that name no method exactly: all a message with any other method (or none) may meet. */
        private final int[] otherCandidates;

        private RuleTable(RuleSet ruleSet, ActiveRule[] all, boolean faultsEnabled) {
            this.ruleSet = ruleSet;
            this.all = all;
            this.active = faultsEnabled ? all : new ActiveRule[0];
            this.faultsEnabled = faultsEnabled;
            this.holdsLeadingEvents = Arrays.stream(active).anyMatch(r -> r.rule().fault() instanceof PrimingDropFault);
            Map<String, List<Integer>> byMethod = new HashMap<>();
            List<Integer> other = new ArrayList<>();
            for (int i = 0; i < active.length; i++) {
                Glob method = active[i].rule().match().method();
                String exact = method == null ? null : method.exactText();
                if (exact != null) {
                    byMethod.computeIfAbsent(exact, m -> new ArrayList<>()).add(i);
                } else {
                    other.add(i);
                }
            }
            Map<String, int[]> candidates = new HashMap<>();
            byMethod.forEach((method, named) -> {
                List<Integer> merged = new ArrayList<>(named);
                merged.addAll(other);
                candidates.put(method, merged.stream().mapToInt(Integer::intValue).sorted().toArray());
            });
            this.candidatesByMethod = candidates;
            this.otherCandidates = other.stream().mapToInt(Integer::intValue).toArray();
        }

        /** A table for {@code rules}, keeping the active rules of {@code old} that did not change. */
        static RuleTable of(RuleSet rules, RuleTable old, boolean faultsEnabled, RuleEngine engine) {
            List<ActiveRule> active = new ArrayList<>();
            for (Rule rule : rules.rules()) {
                if (rule.enabled()) {
                    ActiveRule kept = old == null ? null : old.find(rule);
                    active.add(kept != null ? kept
                            : new ActiveRule(rule, engine.seed ^ stableHash(rule.name()), engine.startNanos));
                }
            }
            return new RuleTable(rules, active.toArray(new ActiveRule[0]), faultsEnabled);
        }

        private ActiveRule find(Rule rule) {
            for (ActiveRule candidate : all) {
                if (candidate.rule().sameAs(rule)) {
                    return candidate;
                }
            }
            return null;
        }

        /**
         * The index of the first rule from {@code from} that picks this frame now, or -1; the
         * match is on the message as it arrived (see {@link ActiveRule#picks}).
         */
        int firstMatch(int from, TransportKind transport, Frame frame, Envelope envelope, String method, String tool,
                       Ticker ticker) {
            ActiveRule[] rules = active;
            int[] candidates = method == null || candidatesByMethod.isEmpty() ? otherCandidates
                    : candidatesByMethod.getOrDefault(method, otherCandidates);
            for (int i : candidates) {
                if (i >= from && rules[i].picks(frame, envelope, method, tool, transport, ticker)) {
                    return i;
                }
            }
            return -1;
        }

        ActiveRule rule(int index) {
            return active[index];
        }
    }

    /** The rules' per-session state: one ordered output per direction, and the faults' own state. */
    static final class SessionState {
        private final DirectionOutput toServer;
        private final DirectionOutput toClient;
        /** Per rule, by identity: a rule that survives a change of the rules keeps its state. */
        private Map<ActiveRule, Object> ruleStates;

        SessionState(RuleEngine engine) {
            toServer = new DirectionOutput(engine, this);
            toClient = new DirectionOutput(engine, this);
        }

        DirectionOutput output(Direction direction) {
            return direction == Direction.CLIENT_TO_SERVER ? toServer : toClient;
        }

        @SuppressWarnings("unchecked")
        <T> T ruleState(ActiveRule rule, Supplier<T> initial) {
            if (ruleStates == null) {
                ruleStates = new IdentityHashMap<>();
            }
            Object state = ruleStates.get(rule);
            if (state == null) {
                state = Objects.requireNonNull(initial.get(), "initial state");
                ruleStates.put(rule, state);
            }
            return (T) state;
        }
    }
}
