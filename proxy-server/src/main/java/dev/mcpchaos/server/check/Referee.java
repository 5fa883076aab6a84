package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Watches MCP messages in the order they passed and reports what breaks the protocol's contract
 * (the {@link Check}s), never changing a message. It is fed one message at a time, live by a
 * {@link RefereeInterceptor} on a proxy's chain or offline from a cassette
 * ({@link CassetteCheck}), and the same messages give the same violations either way.
 *
 * <p>Bounded: per session and direction at most {@value #MAX_IN_FLIGHT} requests in flight are
 * remembered (older ones are forgotten and counted as {@link Report#untracked() untracked}), at
 * most {@value #MAX_SESSIONS} sessions (the oldest is finished early), and at most
 * {@value #KEPT_PER_CHECK} violations kept per check, the rest only counted. Thread-safe (one
 * lock); the live interceptor feeds it from a thread of its own, off the event loops.
 *
 * <p>Inside, a {@link Tracker} follows each session (requests in flight, lifecycle, what reached
 * each peer, what faults excuse) and hands each message to the check families of
 * {@link CheckFamilies#ALL}, one class per family of checks.
 */
public final class Referee {

    /** How many requests in flight per session and direction are remembered. */
    public static final int MAX_IN_FLIGHT = 10_000;
    /** How many sessions are followed at once. */
    public static final int MAX_SESSIONS = 1_024;
    /** How many violations of each check are kept in full. */
    public static final int KEPT_PER_CHECK = 20;
    /** How long an excerpt of an offending message is, at most. */
    public static final int EXCERPT_CHARS = 240;
    /** How long a request may wait for its answer by default. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);

    private final Tracker tracker;

    /** A referee with the {@linkplain #DEFAULT_DEADLINE default deadline}. */
    public Referee() {
        this(DEFAULT_DEADLINE);
    }

    /** @param deadline how long a request may wait for its answer ({@code jsonrpc.unanswered-request}) */
    public Referee(Duration deadline) {
        Objects.requireNonNull(deadline, "deadline");
        if (deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("check deadline: " + deadline + " (expected: > 0)");
        }
        this.tracker = new Tracker(deadline.toNanos());
    }

    /**
     * One message, as it passed.
     *
     * @param sessionKey   what tells sessions apart (live: the proxy's session object, whose name
     *                     may change; offline: the session's name)
     * @param session      the session's name now
     * @param direction    which way it went
     * @param index        its number, for the report (a cassette's {@code seq}); negative: the referee
     *                     numbers messages itself, from 0, in the order it sees them (as a recorder does)
     * @param timeNanos    when it passed, on any clock that is the same for the whole run
     * @param text         the message or line as it came, without its line end
     * @param stdioLine    whether it was a line of a stdio stream (framing checks apply)
     * @param unterminated whether it was a stdio line the stream ended before its newline
     * @param mcpHeaders   on HTTP, the {@code MCP-*} / {@code Mcp-*} headers of the POST a client
     *                     message came in (names in lower case); null where there are none to check
     * @param answeredStatus on HTTP, for a client's message: the status its exchange was answered
     *                     with so far (0: none yet), read when its answer is overdue, since a request
     *                     answered with an HTTP error (a 503, an expired session's 404) gets no
     *                     JSON-RPC answer; null where there is none to ask
     * @param resumed      on HTTP, for a server's message: it came on a stream the client opened
     *                     with {@code Last-Event-ID} (a resumption), where the server replays what
     *                     the client may have missed, answers included
     */
    public record Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                          String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders,
                          java.util.function.IntSupplier answeredStatus, boolean resumed) {
        public Message {
            Objects.requireNonNull(sessionKey, "sessionKey");
            Objects.requireNonNull(session, "session");
            Objects.requireNonNull(direction, "direction");
            Objects.requireNonNull(text, "text");
        }

        /** A message that came on no resumed stream. */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders,
                       java.util.function.IntSupplier answeredStatus) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, mcpHeaders,
                    answeredStatus, false);
        }

        /** A message without HTTP headers to check (stdio, or a server's message). */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, null, null);
        }

        /** A message with its HTTP headers but no exchange to ask for its status (a cassette's). */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, mcpHeaders, null);
        }


        /** The {@code MCP-*} headers of {@code headers} (name, value pairs), names in lower case; null when none. */
        public static Map<String, String> mcpHeaders(List<Map.Entry<String, String>> headers) {
            Map<String, String> mcp = null;
            for (Map.Entry<String, String> header : headers) {
                String name = header.getKey().toLowerCase(java.util.Locale.ROOT);
                if (name.startsWith("mcp-")) {
                    if (mcp == null) {
                        mcp = new java.util.TreeMap<>();
                    }
                    mcp.putIfAbsent(name, header.getValue());
                }
            }
            return mcp;
        }
    }

    /** Looks at one message. */
    public synchronized void observe(Message message) {
        tracker.observe(message);
    }

    /**
     * What a stdio transport reports of its server's exit, for {@code stdio.exit-on-stdin-close};
     * every other event is none of the referee's.
     */
    public dev.mcpchaos.core.observe.TransportObserver transportObserver() {
        return new dev.mcpchaos.core.observe.TransportObserver() {
            @Override
            public void serverExitOverdue(dev.mcpchaos.core.transport.TransportKind transport, String sessionId,
                                          Duration deadline) {
                exitOverdue(sessionId, deadline);
            }

        };
    }

    /** The stdio server of {@code session} was still running {@code deadline} after its stdin closed. */
    public synchronized void exitOverdue(String session, Duration deadline) {
        StdioChecks.exitOverdue(tracker, session, deadline);
    }

    /** The server ended its output (stdio) or the message was dropped before it could be looked at. */
    public synchronized void dropped(long count) {
        tracker.dropped += count;
    }

    /** Ends every session: what is still unanswered is reported. Messages after this start new sessions. */
    public synchronized void finish() {
        tracker.finish();
    }

    /** Ends one session (its stream closed), reporting what it left unanswered. */
    public synchronized void finish(Object sessionKey) {
        tracker.finish(sessionKey);
    }

    /**
     * Says that this referee watches a running proxy and will be told what left it
     * ({@link #delivered}) and what the rules did ({@link #fault}): a receiver then owes an answer
     * only to a request that reached it, and the live-only checks run. Called once, before the
     * first message; {@link RefereeInterceptor} does.
     */
    public synchronized void watchesLiveProxy() {
        tracker.tracksDelivery = true;
        tracker.live = true;
    }

    /**
     * One message left the proxy towards its receiver, after the rules: as it came, changed by a
     * fault, or made by one (an injected answer, a duplicate, a stray line). The receiver is
     * judged on what reached it: a request it never got is owed no answer, a cancel it got frees
     * it, and the initialize answer the client got is the version it must speak.
     *
     * @param sessionKey the session, as in {@link Message#sessionKey()}
     * @param direction  which way it went
     * @param timeNanos  when it left, on the clock of the messages
     * @param kind       its kind, as the proxy's sniffer read it
     * @param id         its JSON-RPC id ({@link Long}, {@link java.math.BigDecimal}, {@link String}), or null
     * @param method     its method, or for a response the method of the request it answers; may be null
     * @param tool       the tool of a tools/call, or null
     * @param text       its text when the referee needs to read it (a changed or made message, a
     *                   cancel, an initialize answer, a batch); null otherwise
     */
    public synchronized void delivered(Object sessionKey, Direction direction, long timeNanos,
                                       dev.mcpchaos.core.frame.MessageKind kind, Object id, String method, String tool,
                                       String text) {
        tracker.delivered(sessionKey, direction, timeNanos, kind, id, method, tool, text);
    }

    /**
     * What a rule did, as the rule engine tells it (before the fault acts). A fault that held a
     * request (latency, throttle, reorder) made any crossing with its cancel; one that ended a
     * connection or the server (crash, disconnect) leaves what was owed unanswered: neither is a
     * peer's violation.
     */
    public synchronized void fault(dev.mcpchaos.rules.FaultEvent event) {
        tracker.fault(event);
    }

    /**
     * Makes the {@code client.*} checks too, on what {@code journal} holds each time a report is
     * asked for (see {@link ClientChecks}): a proxy with both the referee and its journal on.
     */
    public synchronized void judgeClientsBy(
            java.util.function.Supplier<dev.mcpchaos.rules.journal.JournalSnapshot> journal) {
        tracker.journal = Objects.requireNonNull(journal, "journal");
    }

    /** What was found so far. */
    public synchronized Report report() {
        Findings findings = tracker.findings;
        Map<Check, Long> countsCopy = new EnumMap<>(findings.counts);
        Map<Check, List<Violation>> keptCopy = new EnumMap<>(Check.class);
        findings.kept.forEach((check, list) -> keptCopy.put(check, new ArrayList<>(list)));
        if (tracker.journal != null) {
            for (Violation v : ClientChecks.judge(tracker.journal.get())) {
                if (countsCopy.merge(v.check(), 1L, Long::sum) <= KEPT_PER_CHECK) {
                    keptCopy.computeIfAbsent(v.check(), c -> new ArrayList<>()).add(v);
                }
            }
        }
        keptCopy.replaceAll((check, list) -> List.copyOf(list));
        Map<Check, String> notRun = new EnumMap<>(Check.class);
        for (CheckFamily family : CheckFamilies.ALL) {
            for (Check check : family.checks()) {
                String why = countsCopy.getOrDefault(check, 0L) == 0 ? whyNotRun(family, check) : null;
                if (why != null) {
                    notRun.put(check, why);
                }
            }
        }
        return new Report(countsCopy, keptCopy, tracker.messages, tracker.untracked, tracker.dropped, notRun,
                List.copyOf(findings.byFaults), findings.byFaultsCount, tracker.keptFromReceiver, tracker.replayed);
    }

    /**
     * Why {@code check} could not run on what this referee saw, or null when it could: a check
     * that never had the traffic, the journal or the live proxy it needs is "not run", never
     * "passed".
     */
    private String whyNotRun(CheckFamily family, Check check) {
        if (!tracker.anySeen && check != Check.EXIT_ON_STDIN_CLOSE) {
            return "no messages";
        }
        return family.whyNotRun(check, tracker);
    }

    /**
     * What would have been a violation but a fault caused, charged to no peer.
     *
     * @param rule      the rule whose fault caused it, with the fault's type: {@code 'hold' (latency)}
     * @param violation what it would have been
     */
    public record FaultFinding(String rule, Violation violation) {
        public FaultFinding {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(violation, "violation");
        }

        @Override
        public String toString() {
            return "rule " + rule + ": " + violation;
        }
    }

    /**
     * What a referee found: the count of each check's violations, the first
     * {@value #KEPT_PER_CHECK} of each, how many messages it saw, how many requests it stopped
     * following for room ({@code untracked}), how many messages it never saw ({@code dropped}),
     * the checks that could not run and why ({@code notRun}: never "passed"), what faults caused
     * ({@code byFaults}, the first 80 of {@code byFaultsCount}; charged to no peer), how many
     * requests a fault kept from their receiver ({@code keptFromReceiver}: owed no answer), and how
     * many answers a server replayed on a resumed stream ({@code replayed}: no second answer).
     */
    public record Report(Map<Check, Long> counts, Map<Check, List<Violation>> violations, long messages,
                         long untracked, long dropped, Map<Check, String> notRun, List<FaultFinding> byFaults,
                         long byFaultsCount, long keptFromReceiver, long replayed) {

        /** A report with nothing skipped and no faults (for tests and tools that build one). */
        public Report(Map<Check, Long> counts, Map<Check, List<Violation>> violations, long messages, long untracked,
                      long dropped) {
            this(counts, violations, messages, untracked, dropped, Map.of(), List.of(), 0, 0, 0);
        }

        /** Whether {@code check} could run (see {@link #notRun}). */
        public boolean ran(Check check) {
            return !notRun.containsKey(check);
        }

        /** The violations kept, all checks, in check order. */
        public List<Violation> all() {
            List<Violation> all = new ArrayList<>();
            violations.values().forEach(all::addAll);
            return all;
        }

        /** How many violations of {@code check}. */
        public long count(Check check) {
            return counts.getOrDefault(check, 0L);
        }

        /** Whether a violation of {@code severity} or worse was found. */
        public boolean failsAt(Severity severity) {
            return counts.entrySet().stream().anyMatch(e -> e.getValue() > 0
                    && e.getKey().severity().ordinal() <= severity.ordinal());
        }

        /** The ids of the checks that fired, for tests and logs. */
        public Set<String> firedIds() {
            Set<String> ids = new java.util.TreeSet<>();
            counts.forEach((c, n) -> {
                if (n > 0) {
                    ids.add(c.id());
                }
            });
            return ids;
        }
    }

    @Override
    public String toString() {
        return "Referee(" + tracker.messages + " messages)";
    }
}
