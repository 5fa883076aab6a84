package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.FrameSink;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The MCP sessions the proxy has seen, by {@code Mcp-Session-Id}, each with its own interceptor
 * chain (and so its own correlation state). A request without a session id (the initialize
 * request, or any request of the stateless revision) gets a chain of its own; if its response
 * names a session, that chain becomes the session's, so the initialize exchange stays correlated.
 */
final class HttpSessions {

    private final ConcurrentHashMap<String, InterceptorChain> chains = new ConcurrentHashMap<>();
    private final AtomicLong unnamed = new AtomicLong();
    /** Whether a fault ever expired a session; until one does, no request needs the lock. */
    private volatile boolean anyExpired;
    private final Set<String> expired = Collections.newSetFromMap(
            new LinkedHashMap<String, Boolean>() {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > 10_000;
                }
            });
    private final List<FrameInterceptor> interceptors;
    private final EventExecutor fixedExecutor;
    private final ByteBufAllocator alloc;
    private final ConnectionControl connection;
    private final FrameSink toServer;
    private final FrameSink toClient;
    private final TransportObserver observer;

    HttpSessions(List<FrameInterceptor> interceptors, EventExecutor executor, ByteBufAllocator alloc,
                 ConnectionControl connection, FrameSink toServer, FrameSink toClient, TransportObserver observer) {
        this.interceptors = List.copyOf(interceptors);
        this.fixedExecutor = executor;
        this.alloc = alloc;
        this.connection = connection;
        this.toServer = toServer;
        this.toClient = toClient;
        this.observer = observer;
    }

    /**
     * The chain for a request: its session's, or a new one when it names none. A new chain runs
     * on {@code loop}, the event loop of the connection the request came on, so a session whose
     * requests come on one connection never changes threads; requests of the session that come
     * on other connections hop to it.
     */
    InterceptorChain chainFor(String sessionId, EventExecutor loop) {
        if (sessionId == null) {
            return newChain("http-" + unnamed.incrementAndGet(), loop);
        }
        if (isExpired(sessionId)) {
            return newChain(sessionId, loop); // answered 404 by the exchange; not kept
        }
        return chains.computeIfAbsent(sessionId, id -> newChain(id, loop));
    }

    /**
     * The chain for a request of the legacy HTTP+SSE transport, which names its session in the
     * query ({@code POST /message?sessionId=...}): the session's chain when its {@code GET /sse}
     * stream named it (see {@link #learn}), so responses on that stream are correlated with these
     * requests; else a chain of its own, not kept (an unknown id must not grow the table).
     */
    InterceptorChain chainForLegacy(String legacySessionId, EventExecutor loop) {
        InterceptorChain known = chains.get(legacySessionId);
        return known != null ? known : newChain("http-" + unnamed.incrementAndGet(), loop);
    }

    /** The upstream named a session in answer to a request that ran on {@code chain}. */
    void learn(String sessionId, InterceptorChain chain) {
        if (chains.putIfAbsent(sessionId, chain) == null) {
            chain.session().rename(sessionId);
            observer.sessionStarted(TransportKind.HTTP, sessionId);
        }
    }

    /** The session ended (DELETE, or the upstream answered 404 for it). */
    void end(String sessionId) {
        if (chains.remove(sessionId) != null) {
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

    /** Whether {@code sessionId} names a session the upstream named (and that has not ended). */
    boolean isKnown(String sessionId) {
        return chains.containsKey(sessionId);
    }

    /** How many sessions are known. */
    int size() {
        return chains.size();
    }

    private InterceptorChain newChain(String id, EventExecutor loop) {
        EventExecutor executor = fixedExecutor != null ? fixedExecutor : loop;
        return new InterceptorChain(interceptors, new Session(id), TransportKind.HTTP, executor, alloc, connection,
                toServer, toClient);
    }
}
