package dev.mcpchaos.server.journal;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.fault.ForwardingHttpFaultActions;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.rules.journal.ParamsFingerprint;
import io.netty.util.concurrent.FastThreadLocal;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Fills a {@link JournalRing} from the interceptor chain: {@link #arrivals()} goes before the
 * rule engine and writes an entry for each message as it arrived; the engine's
 * {@link #faults() fault listener} and {@link #httpActions HTTP actions} add what each rule did
 * (and the status a fault answered with); {@link #departures()} goes after the engine and marks
 * what left the proxy as delivered. Both interceptors only observe, so a stream the rules leave
 * alone is still relayed as it comes.
 *
 * <p>A client's request the proxy answered itself before it reached the chain (on an HTTP
 * session a fault expired, every later request is answered 404 by the transport, and only shown
 * to the observers) is journaled with that status and never as delivered: the server did not get
 * it. As everywhere else in the journal (and in the referee's counts), an answer the proxy made
 * is not a delivery.
 *
 * <p>What it costs a message: one entry (an object and a lock on the ring), and for a request one
 * streaming pass over it for the {@link ParamsFingerprint}. It keeps no content unless asked.
 * A message that does not leave at once (a latency holds it) is remembered until it leaves, in a
 * table of at most {@value #MAX_IN_FLIGHT} messages; beyond that the oldest is forgotten and
 * stays "not delivered".
 */
public final class JournalRecorder {

    /** How many held messages it remembers to mark delivered when they leave. */
    static final int MAX_IN_FLIGHT = 4096;

    private final JournalRing ring;
    private final boolean keepContent;
    private final Clock clock;
    private final long startNanos = System.nanoTime();
    /** The message the chain is handing on, on this thread: faults and departures find theirs here first. */
    private final FastThreadLocal<InFlight[]> current = new FastThreadLocal<>() {
        @Override
        protected InFlight[] initialValue() {
            return new InFlight[1];
        }
    };
    /** Messages that did not leave while {@link Arrivals#onFrame} ran, by frame. */
    private final Map<Key, InFlight> held = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, InFlight> eldest) {
            return size() > MAX_IN_FLIGHT;
        }
    };
    private final Arrivals arrivals = new Arrivals();
    private final Departures departures = new Departures();

    /**
     * @param ring where the entries go
     * @param keepContent whether entries keep each message's JSON text
     */
    public JournalRecorder(JournalRing ring, boolean keepContent) {
        this(ring, keepContent, Clock.systemUTC());
    }

    JournalRecorder(JournalRing ring, boolean keepContent, Clock clock) {
        this.ring = Objects.requireNonNull(ring, "ring");
        this.keepContent = keepContent;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The journal it fills. */
    public JournalRing journal() {
        return ring;
    }

    /** The interceptor to put before the rule engine. */
    public FrameInterceptor arrivals() {
        return arrivals;
    }

    /** The interceptor to put after the rule engine. */
    public FrameInterceptor departures() {
        return departures;
    }

    /** The rule engine's listener: adds each fault to its message's entry. */
    public FaultListener faults() {
        return this::onFault;
    }

    /**
     * The transport's observer for the journal: a message the chain let through (so journaled as
     * delivered when it left the chain) that the transport then could not write, because its
     * client had gone, is marked not delivered. That is how the journal sees an HTTP client close
     * the stream of a request before its answer (the 2026-07-28 revision's cancellation) while a
     * fault held the answer: the answer never reached it.
     */
    public TransportObserver transportObserver() {
        return new TransportObserver() {
            @Override
            public void messageDiscarded(TransportKind transport, String sessionId, Direction direction,
                                         MessageKind kind, Object id, String method, DiscardReason reason) {
                if (reason == DiscardReason.CLIENT_GONE) {
                    undeliver(sessionId, direction, kind, id, method);
                }
            }

            @Override
            public void exchangeAbandoned(TransportKind transport, String sessionId, Object requestId) {
                closedByClient(sessionId, requestId);
            }
        };
    }

    /** Notes on the newest request of this session and id that its client closed its exchange now. */
    private void closedByClient(String sessionId, Object requestId) {
        Duration now = Duration.ofNanos(System.nanoTime() - startNanos);
        ring.updateNewest(e -> e.fromClient() && e.kind() == MessageKind.REQUEST && Objects.equals(e.id(), requestId)
                && (sessionId == null || sessionId.equals(e.session())), entry -> entry.withClientClosed(now));
    }

    /** Marks the newest delivered entry of this session, direction, kind, id and method not delivered. */
    private void undeliver(String sessionId, Direction direction, MessageKind kind, Object id, String method) {
        ring.updateNewest(e -> e.delivered() && e.direction() == direction && e.kind() == kind
                && Objects.equals(e.id(), id) && Objects.equals(e.method(), method)
                && (sessionId == null || sessionId.equals(e.session())), JournalEntry::withoutDelivery);
    }

    /** {@code delegate}, also noting in the journal the HTTP status a fault answers with. */
    public HttpFaultActions httpActions(HttpFaultActions delegate) {
        Objects.requireNonNull(delegate, "delegate");
        // Forwarding: an action added to HttpFaultActions later reaches the delegate without an edit here.
        return new ForwardingHttpFaultActions() {
            @Override
            public HttpFaultActions delegate() {
                return delegate;
            }

            @Override
            public boolean respond(InterceptorContext ctx, dev.mcpchaos.core.frame.Frame frame, int status,
                                   Map<String, String> headers, String body) {
                Runnable undo = noteHttp(ctx, frame, status, headersThatMatter(headers));
                boolean answered = delegate.respond(ctx, frame, status, headers, body);
                if (!answered) {
                    undo.run();
                }
                return answered;
            }

            @Override
            public boolean expireSession(InterceptorContext ctx, Frame frame) {
                // The transport answers the request as an unknown session.
                Runnable undo = frame.envelope().isRequest() ? noteHttp(ctx, frame, 404, Map.of()) : () -> { };
                boolean expired = delegate.expireSession(ctx, frame);
                if (!expired) {
                    undo.run();
                }
                return expired;
            }
        };
    }

    /** The headers a fault answered with, but those about the body. */
    private static Map<String, String> headersThatMatter(Map<String, String> headers) {
        Map<String, String> kept = new LinkedHashMap<>();
        headers.forEach((name, value) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (!lower.equals("content-type") && !lower.equals("content-length")) {
                kept.put(name, value);
            }
        });
        return kept;
    }

    /**
     * Notes the HTTP answer a fault is about to give, before the transport writes it: a client
     * that reads the journal as soon as it has the answer finds it there. Returns what takes the
     * note back, for a fault the transport could not act on.
     */
    private Runnable noteHttp(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers) {
        InFlight flight = find(new Key(ctx.session(), frame.route(), frame.direction(), frame.sequence()));
        if (flight == null) {
            return () -> { };
        }
        JournalEntry[] before = new JournalEntry[1];
        ring.update(flight.sequence, e -> {
            before[0] = e;
            return e.withHttp(status, headers);
        });
        return () -> {
            if (before[0] != null) {
                ring.update(flight.sequence, e -> e.withHttpOf(before[0]));
            }
        };
    }

    private void onFault(FaultEvent event) {
        InFlight flight = current.get()[0];
        if (flight == null || flight.delivered || !about(flight, event)) {
            flight = findHeld(event);
        }
        if (flight != null) {
            ring.update(flight.sequence, e -> e.withFault(new JournalEntry.FaultAction(event.rule(), event.fault(),
                    event.detail())));
        }
    }

    /** A held message the event is about: the oldest of its session and direction with its id and method. */
    private InFlight findHeld(FaultEvent event) {
        synchronized (held) {
            for (InFlight flight : held.values()) {
                if (about(flight, event)) {
                    return flight;
                }
            }
        }
        return null;
    }

    private static boolean about(InFlight flight, FaultEvent event) {
        return flight.direction == event.direction() && flight.session.id().equals(event.session())
                && Objects.equals(flight.id, event.id()) && Objects.equals(flight.method, event.method());
    }

    private InFlight find(Key key) {
        InFlight flight = current.get()[0];
        if (flight != null && flight.key.equals(key)) {
            return flight;
        }
        synchronized (held) {
            return held.get(key);
        }
    }

    private JournalEntry entry(InterceptorContext ctx, Frame frame) {
        MessageKind kind = frame.envelope().kind();
        Object id = frame.envelope().hasId() ? frame.envelope().id() : null;
        String method = frame.method();
        Object requestId = kind == MessageKind.NOTIFICATION && "notifications/cancelled".equals(method)
                ? ParamsFingerprint.requestId(frame.content()) : null;
        // Both fingerprints from one pass: the write one sees through idempotency-key arguments.
        ParamsFingerprint.Fingerprints fingerprints = kind == MessageKind.REQUEST
                ? ParamsFingerprint.ofRequest(frame.content()) : null;
        String message = keepContent ? frame.content().toString(StandardCharsets.UTF_8) : null;
        // A server's message on a resumed SSE stream says so: the drill's resumption scenarios read it.
        String resumedAfter = frame.direction() == Direction.SERVER_TO_CLIENT
                ? frame.requestHeader(JournalEntry.LAST_EVENT_ID) : null;
        return new JournalEntry(0, Duration.ofNanos(System.nanoTime() - startNanos), clock.instant(),
                ctx.session().id(), ctx.transport().name().toLowerCase(Locale.ROOT), frame.direction(), kind, id,
                method, frame.toolName(), requestId, null,
                resumedAfter == null ? null : Map.of(JournalEntry.LAST_EVENT_ID, resumedAfter), List.of(), false,
                fingerprints == null ? null : fingerprints.params(), fingerprints == null ? null : fingerprints.write(),
                message);
    }

    /**
     * The status the proxy answered a client's HTTP request with before the request met the
     * chain (an expired session's 404), or 0: a request on its way to the server has no answer
     * yet when it arrives here, since its exchange is answered only after it was forwarded.
     */
    private static int answeredByTheProxy(Frame frame) {
        return frame.direction() == Direction.CLIENT_TO_SERVER && frame.envelope().isRequest()
                && frame.route() instanceof HeaderSource exchange ? exchange.answeredStatus() : 0;
    }

    /** Where a frame is going: its session, route (the HTTP exchange, by identity) and number. */
    private record Key(Session session, Object route, Direction direction, long frameSequence) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && route == k.route && session == k.session && frameSequence == k.frameSequence
                    && direction == k.direction;
        }

        @Override
        public int hashCode() {
            return (Long.hashCode(frameSequence) * 31 + System.identityHashCode(route)) * 31
                    + System.identityHashCode(session) + direction.ordinal();
        }
    }

    /** A message between its arrival and its departure. */
    private static final class InFlight {
        final long sequence;
        final Key key;
        /** The session; its id may change (an HTTP session is named once initialize is answered). */
        final Session session;
        final Direction direction;
        final Object id;
        final String method;
        /** The proxy had answered its exchange before it arrived: it is only observed, it never leaves. */
        final boolean answeredHere;
        volatile boolean delivered;

        InFlight(long sequence, Key key, Object id, String method, boolean answeredHere) {
            this.sequence = sequence;
            this.key = key;
            this.session = key.session;
            this.direction = key.direction;
            this.id = id;
            this.method = method;
            this.answeredHere = answeredHere;
        }
    }

    private final class Arrivals implements ObservingInterceptor {
        @Override
        public void onFrame(InterceptorContext ctx, Frame frame) {
            if (frame.envelope().kind() == MessageKind.BLANK) {
                ctx.forward(frame); // a blank line is no message
                return;
            }
            JournalEntry entry;
            try {
                entry = entry(ctx, frame);
            } catch (RuntimeException e) {
                ctx.forward(frame); // the journal must never cost a message
                throw e;
            }
            int answeredHere = answeredByTheProxy(frame);
            if (answeredHere != 0) {
                entry = entry.withHttp(answeredHere, Map.of());
            }
            long sequence = ring.add(entry);
            Key key = new Key(ctx.session(), frame.route(), frame.direction(), frame.sequence());
            InFlight flight = new InFlight(sequence, key, entry.id(), entry.method(), answeredHere != 0);
            InFlight[] slot = current.get();
            InFlight outer = slot[0];
            slot[0] = flight;
            try {
                ctx.forward(frame);
            } finally {
                if (!flight.delivered) {
                    synchronized (held) {
                        if (!flight.delivered) {
                            held.put(key, flight);
                        }
                    }
                }
                // Kept until the next arrival when nothing was around it: an observed frame meets
                // the departures only after this returns.
                if (outer != null) {
                    slot[0] = outer;
                }
            }
        }

        @Override
        public String toString() {
            return "JournalRecorder.arrivals";
        }
    }

    private final class Departures implements ObservingInterceptor {
        @Override
        public void observe(InterceptorContext ctx, Frame frame) {
            if (frame.envelope().kind() != MessageKind.BLANK) {
                Key key = new Key(ctx.session(), frame.route(), frame.direction(), frame.sequence());
                InFlight flight = current.get()[0];
                if (flight == null || !flight.key.equals(key)) {
                    synchronized (held) {
                        flight = held.remove(key);
                    }
                } else if (!flight.delivered) {
                    synchronized (held) {
                        held.remove(key);
                    }
                }
                if (flight != null && !flight.delivered && !flight.answeredHere) {
                    flight.delivered = true;
                    ring.update(flight.sequence, JournalEntry::withDelivered);
                }
            }
        }

        @Override
        public String toString() {
            return "JournalRecorder.departures";
        }
    }

    @Override
    public String toString() {
        return "JournalRecorder(" + ring + ')';
    }
}
