package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.FrameSink;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.observe.TransportObserver.SessionExpiry;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The MCP sessions the proxy has seen, by {@code Mcp-Session-Id}, each with its own interceptor
 * chain (and so its own correlation state). A request without a session id (the initialize
 * request, or any request of the stateless revision) gets a chain of its own; if its response
 * names a session, that chain becomes the session's, so the initialize exchange stays correlated.
 *
 * <p>A session id the proxy does not know (one the upstream named before the proxy started, one
 * the proxy forgot, or a made-up one) is passed on with a chain of its own and kept only once
 * the upstream answers it with a 2xx: ids the upstream refuses never take a place in the table.
 *
 * <p><b>Bounded.</b> A session is idle while no exchange of it is in flight (a GET stream open, a
 * request waiting for its answer); one idle for {@code idleTimeout} is forgotten. The table holds
 * at most {@code maxSessions}; a new one past that evicts the least recently used idle session
 * (or, when every one is busy, the least recently used: its exchanges in flight finish on its
 * chain, the table just stops knowing it). A session forgotten either way is reported to
 * {@link TransportObserver#sessionExpired}, and a later request with its id is treated as one of
 * a session the proxy never saw: passed on, and the upstream answers as it will. Its chain and
 * correlator, and the rules' per-session state kept by that chain, go with the last exchange that
 * held them; an idle session holds no frames (what a fault holds belongs to an exchange and is
 * let go when that exchange ends). Defaults: {@value #DEFAULT_MAX_SESSIONS} sessions, 30 min idle.
 *
 * <p>One task sweeps idle sessions, on {@code sweeper} and by its {@link EventExecutor#ticker()},
 * scheduled only while the table holds a session and due when the least recently used one would
 * expire. Thread-safe: the table is shared by every event loop, under one short lock.
 */
final class HttpSessions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpSessions.class);

    /** The default most sessions kept. */
    static final int DEFAULT_MAX_SESSIONS = 10_000;
    /** The default time an idle session is kept. */
    static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(30);

    /** By id, least recently used first (access order); guarded by itself. */
    private final LinkedHashMap<String, Entry> table = new LinkedHashMap<>(64, 0.75f, true);
    private final AtomicLong unnamed = new AtomicLong();
    /**
     * Sessions that ended (DELETE, a 404) lately, the last 10,000, guarded by {@code table}: a
     * 2xx that comes after the end for a request that named the session (a stream's reconnect,
     * a request in flight beside the DELETE) must not bring it back into the table.
     */
    private final Set<String> ended = lastIds(10_000);
    /** Whether a fault ever expired a session; until one does, no request needs the lock. */
    private volatile boolean anyExpired;
    /** Sessions a fault expired, the last 10,000 (see {@link #expire}); guarded by itself. */
    private final Set<String> expired = lastIds(10_000);
    private final List<FrameInterceptor> interceptors;
    private final EventExecutor fixedExecutor;
    private final ByteBufAllocator alloc;
    private final ConnectionControl connection;
    private final FrameSink toServer;
    private final FrameSink toClient;
    private final TransportObserver observer;
    private final long idleTimeoutNanos;
    private final int maxSessions;
    private final EventExecutor sweeper;
    /** The sweep task while one is scheduled; guarded by {@link #table}. */
    private ScheduledFuture<?> sweep;
    private boolean closed;
    /** The first eviction is logged at WARN, the rest at DEBUG: a flood must not flood the log. */
    private boolean evictedBefore;

    /** A session the table holds. Fields guarded by {@link #table}. */
    private static final class Entry {
        final InterceptorChain chain;
        /** Exchanges of this session in flight, from their start to their end. */
        int inFlight;
        /** When it was last used (an exchange began or ended), on the sweeper's ticker. */
        long lastUsed;

        Entry(InterceptorChain chain, long now) {
            this.chain = chain;
            this.inFlight = 1; // the exchange that made the upstream name (or accept) it
            this.lastUsed = now;
        }
    }

    /** A session the table let go of, to report once the lock is released. */
    private record Forgotten(String id, SessionExpiry reason, boolean busy) {
    }

    /** A set of ids that keeps the {@code max} added last, forgetting the oldest; not synchronized. */
    private static Set<String> lastIds(int max) {
        return Collections.newSetFromMap(new LinkedHashMap<String, Boolean>() {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > max;
            }
        });
    }

    HttpSessions(List<FrameInterceptor> interceptors, EventExecutor executor, ByteBufAllocator alloc,
                 ConnectionControl connection, FrameSink toServer, FrameSink toClient, TransportObserver observer,
                 Duration idleTimeout, int maxSessions, EventExecutor sweeper) {
        this.interceptors = List.copyOf(interceptors);
        this.fixedExecutor = executor;
        this.alloc = alloc;
        this.connection = connection;
        this.toServer = toServer;
        this.toClient = toClient;
        this.observer = observer;
        this.idleTimeoutNanos = idleTimeout.toNanos();
        this.maxSessions = maxSessions;
        this.sweeper = sweeper;
    }

    /**
     * The chain for a request: its session's, or a new one when it names none or one the table
     * does not hold. A new chain runs on {@code loop}, the event loop of the connection the
     * request came on, so a session whose requests come on one connection never changes threads;
     * requests of the session that come on other connections hop to it. Every call for a named
     * session is matched by one {@link #exchangeEnded} when the exchange ends; a sessionless
     * request's is only if {@link #learn} kept its chain (the table holds no other).
     */
    InterceptorChain chainFor(String sessionId, EventExecutor loop) {
        if (sessionId == null) {
            return newChain("http-" + unnamed.incrementAndGet(), loop);
        }
        if (isExpired(sessionId)) {
            return newChain(sessionId, loop); // answered 404 by the exchange; not kept
        }
        InterceptorChain known = use(sessionId);
        return known != null ? known : newChain(sessionId, loop); // kept once the upstream accepts it (learn)
    }

    /**
     * The chain for a request of the legacy HTTP+SSE transport, which names its session in the
     * query ({@code POST /message?sessionId=...}): the session's chain when its {@code GET /sse}
     * stream named it (see {@link #learn}), so responses on that stream are correlated with these
     * requests; else a chain of its own, not kept (an unknown id must not grow the table).
     */
    InterceptorChain chainForLegacy(String legacySessionId, EventExecutor loop) {
        InterceptorChain known = use(legacySessionId);
        return known != null ? known : newChain("http-" + unnamed.incrementAndGet(), loop);
    }

    /** The chain of a session the table holds, counted as in flight from now; null when it holds none. */
    private InterceptorChain use(String sessionId) {
        synchronized (table) {
            Entry entry = table.get(sessionId); // now the most recently used
            if (entry == null) {
                return null;
            }
            entry.inFlight++;
            entry.lastUsed = now();
            return entry.chain;
        }
    }

    /**
     * The upstream named a session in answer to a request that ran on {@code chain}, or accepted
     * one the table did not hold: the table keeps it, with that exchange in flight, and evicts the
     * least recently used session if it is full. Nothing happens when it holds the id already.
     */
    void learn(String sessionId, InterceptorChain chain) {
        learn(sessionId, chain, false);
    }

    /**
     * The upstream answered 2xx to a request that named {@code sessionId}: it knows the session,
     * so the table keeps it, unless it ended meanwhile (see {@link #ended}).
     */
    void accepted(String sessionId, InterceptorChain chain) {
        learn(sessionId, chain, true);
    }

    private void learn(String sessionId, InterceptorChain chain, boolean acceptedOnly) {
        if (isExpired(sessionId)) {
            return; // a fault expired it (perhaps while this answer was on its way): answered 404 from now on
        }
        List<Forgotten> evicted = null;
        synchronized (table) {
            if (closed || table.containsKey(sessionId) || acceptedOnly && ended.contains(sessionId)) {
                return;
            }
            chain.session().rename(sessionId);
            table.put(sessionId, new Entry(chain, now()));
            if (table.size() > maxSessions) {
                evicted = evictLeastRecentlyUsed();
            }
            scheduleSweep(idleTimeoutNanos);
        }
        observer.sessionStarted(TransportKind.HTTP, sessionId);
        if (evicted != null) {
            report(evicted);
        }
    }

    /**
     * An exchange that got its chain from {@link #chainFor} or {@link #chainForLegacy} ended (or
     * one whose chain {@link #learn} kept): its session is used now, and idle once none is in
     * flight. A chain the table does not hold (any more) is no business of the table's.
     */
    void exchangeEnded(InterceptorChain chain) {
        synchronized (table) {
            Entry entry = table.get(chain.session().id());
            if (entry != null) {
                entry.lastUsed = now(); // set whenever it moves to the end, so the order stays the order of use
                if (entry.chain == chain && entry.inFlight > 0) {
                    entry.inFlight--;
                }
            }
        }
    }

    /** The session ended (DELETE, or the upstream answered 404 for it). */
    void end(String sessionId) {
        boolean removed;
        synchronized (table) {
            removed = table.remove(sessionId) != null;
            ended.add(sessionId);
        }
        if (removed) {
            observer.sessionEnded(TransportKind.HTTP, sessionId);
        }
    }

    /**
     * A fault expired the session: the proxy answers its requests with 404 from now on, as a
     * server does for a session it no longer knows. Remembers the last 10,000 expired ids.
     */
    void expire(String sessionId) {
        synchronized (expired) {
            expired.add(sessionId);
        }
        anyExpired = true;
        end(sessionId);
    }

    /** Whether a fault expired this session. */
    boolean isExpired(String sessionId) {
        if (sessionId == null || !anyExpired) {
            return false; // the common case, without the lock every event loop would share
        }
        synchronized (expired) {
            return expired.contains(sessionId);
        }
    }

    /** Whether {@code sessionId} names a session the table holds (the upstream named or accepted it). */
    boolean isKnown(String sessionId) {
        synchronized (table) {
            return table.containsKey(sessionId); // not a use: the order stays
        }
    }

    /** How many sessions the table holds. */
    int size() {
        synchronized (table) {
            return table.size();
        }
    }

    /** Stops the sweep; the table is left to the garbage collector with the proxy. */
    @Override
    public void close() {
        synchronized (table) {
            closed = true;
            if (sweep != null) {
                sweep.cancel(false);
                sweep = null;
            }
        }
    }

    /**
     * Removes the least recently used idle session; when every one is busy, the least recently
     * used one. A busy session passed over goes to the end of the order: it is in use now, and
     * the next eviction need not pass it again. Under the lock.
     */
    private List<Forgotten> evictLeastRecentlyUsed() {
        List<Forgotten> evicted = new ArrayList<>(1);
        while (table.size() > maxSessions) {
            List<Map.Entry<String, Entry>> busy = null;
            Map.Entry<String, Entry> victim = null;
            for (Iterator<Map.Entry<String, Entry>> it = table.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Entry> candidate = it.next();
                if (candidate.getValue().inFlight == 0) {
                    victim = candidate;
                    it.remove();
                    break;
                }
                if (busy == null) {
                    busy = new ArrayList<>();
                }
                busy.add(candidate);
                it.remove();
            }
            long now = now();
            if (busy != null) {
                for (Map.Entry<String, Entry> entry : busy) {
                    entry.getValue().lastUsed = now;
                    table.put(entry.getKey(), entry.getValue());
                }
            }
            boolean wasBusy = victim == null;
            if (wasBusy) {
                // Every session is busy (and in the original order again): the least recently used goes.
                Iterator<Map.Entry<String, Entry>> it = table.entrySet().iterator();
                victim = it.next();
                it.remove();
            }
            evicted.add(new Forgotten(victim.getKey(), SessionExpiry.EVICTED, wasBusy));
        }
        return evicted;
    }

    /** Forgets the sessions idle for the timeout; runs on the sweeper. */
    private void sweep() {
        List<Forgotten> idle = new ArrayList<>();
        synchronized (table) {
            sweep = null;
            if (closed) {
                return;
            }
            long now = now();
            long nextDue = idleTimeoutNanos;
            for (Iterator<Map.Entry<String, Entry>> it = table.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Entry> next = it.next();
                Entry entry = next.getValue();
                if (entry.inFlight > 0) {
                    continue; // not idle, however long ago it began
                }
                long idleFor = now - entry.lastUsed;
                if (idleFor < idleTimeoutNanos) {
                    nextDue = idleTimeoutNanos - idleFor; // the rest were used later, and expire later
                    break;
                }
                it.remove();
                idle.add(new Forgotten(next.getKey(), SessionExpiry.IDLE, false));
            }
            if (!table.isEmpty()) {
                scheduleSweep(nextDue);
            }
        }
        report(idle);
    }

    /** Schedules the sweep in {@code delayNanos} unless one is scheduled; under the lock. */
    private void scheduleSweep(long delayNanos) {
        if (sweep != null || closed) {
            return;
        }
        try {
            sweep = sweeper.schedule(this::sweep, Math.max(delayNanos, TimeUnit.MILLISECONDS.toNanos(1)),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            closed = true; // shutting down: nothing will be swept any more
        }
    }

    private void report(List<Forgotten> forgotten) {
        for (Forgotten session : forgotten) {
            if (session.reason() == SessionExpiry.EVICTED && !evictedBefore) {
                evictedBefore = true; // a benign race may log two at WARN
                log.warn("session table full ({} sessions): evicted the least recently used, {}; later requests "
                        + "with its id pass on as if it had never been seen (see --max-sessions)", maxSessions,
                        session.id());
            } else if (log.isDebugEnabled()) {
                log.debug("session {} {}{}", session.id(), session.reason() == SessionExpiry.IDLE
                        ? "was idle for " + Duration.ofNanos(idleTimeoutNanos) + ": forgotten"
                        : "evicted: the table is full", session.busy() ? " (with exchanges in flight)" : "");
            }
            observer.sessionExpired(TransportKind.HTTP, session.id(), session.reason());
        }
    }

    private long now() {
        return sweeper.ticker().nanoTime();
    }

    private InterceptorChain newChain(String id, EventExecutor loop) {
        EventExecutor executor = fixedExecutor != null ? fixedExecutor : loop;
        return new InterceptorChain(interceptors, new Session(id), TransportKind.HTTP, executor, alloc, connection,
                toServer, toClient);
    }
}
