package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.intercept.InterceptorChain;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;

/**
 * The MCP session side of an {@link Exchange}: which chain it takes (the session's, a legacy
 * stream's, or one of its own), what the session table learns from it (a session the upstream
 * names or accepts, one it ends, the session a legacy GET stream's endpoint event names), and
 * telling the table once that the exchange is over. On the client connection's event loop.
 */
final class ExchangeSession {

    private final HttpSessions sessions;
    private final HttpRequest head;
    /** The request's {@code Mcp-Session-Id}, or null. */
    final String id;
    final InterceptorChain chain;
    /** Watches a GET stream with no session for the legacy transport's endpoint event; null otherwise. */
    private LegacyEndpointProbe legacyProbe;
    /** The legacy session this GET stream named, ended with the stream. */
    private String legacySession;
    /** The session table was told this exchange ended (see {@link HttpSessions#exchangeEnded}). */
    private boolean released;
    /**
     * The chain may be in the session table: the request named a session, or the table learnt
     * one from this exchange. A sessionless request's chain is not, and telling the table it
     * ended took its lock for nothing on every 2026-07-28 request.
     */
    private boolean tracked;

    ExchangeSession(HttpSessions sessions, HttpRequest head, String id, Channel downstream) {
        this.sessions = sessions;
        this.head = head;
        this.id = id;
        String legacy = id == null ? HttpMessages.legacySessionId(head.uri()) : null;
        this.tracked = id != null || legacy != null;
        this.chain = legacy != null ? sessions.chainForLegacy(legacy, downstream.eventLoop())
                : sessions.chainFor(id, downstream.eventLoop());
        // A legacy GET /sse stream names its session in its first event (endpoint): watch for it.
        if (id == null && HttpMethod.GET.equals(head.method())) {
            legacyProbe = new LegacyEndpointProbe(downstream.alloc());
        }
    }

    /** Whether a fault expired the request's session: its requests are answered 404 here. */
    boolean expired() {
        return sessions.isExpired(id);
    }

    /**
     * A fault expires the session {@code at} belongs to (see {@link ExchangeContext#expireSession});
     * false when the table does not hold it (a sessionless request, or one the upstream never named).
     * Any thread: the table has its own lock.
     */
    boolean expire() {
        String chainSession = chain.session().id();
        if (!sessions.isKnown(chainSession)) {
            return false;
        }
        sessions.expire(chainSession);
        return true;
    }

    /** The final response head came; {@code named}: its Mcp-Session-Id, or null. */
    void onResponseHead(HttpResponse response, String named) {
        if (named != null && id == null) {
            tracked = true;
            sessions.learn(named, chain);
        } else if (id != null && (named == null || named.equals(id))
                && response.status().codeClass() == HttpStatusClass.SUCCESS
                && !HttpMethod.DELETE.equals(head.method())) {
            sessions.accepted(id, chain); // kept unless held already or ended meanwhile
        }
        if (id != null && (response.status().code() == 404
                || HttpMethod.DELETE.equals(head.method()) && response.status().codeClass()
                == HttpStatusClass.SUCCESS)) {
            sessions.end(id);
        }
    }

    /**
     * Bytes of the response body, before they are relayed. A legacy GET stream's endpoint event
     * names its session: that session takes this exchange's chain, so that the requests POSTed
     * there and the responses on this stream are correlated (rules on {@code kind: response}
     * and {@code tool} match). Learnt before the event is relayed, so the client cannot POST
     * before the proxy knows.
     */
    void onResponseBytes(ByteBuf bytes) {
        if (legacyProbe == null) {
            return;
        }
        String named = legacyProbe.look(bytes);
        if (named != null) {
            legacySession = named;
            tracked = true;
            sessions.learn(named, chain);
        }
        if (legacyProbe.over()) {
            legacyProbe = null; // it let go of its buffers when it was over
        }
    }

    /** The exchange is over: the probe's buffers go, a legacy stream's session ends, the table hears it once. */
    void release() {
        if (legacyProbe != null) {
            legacyProbe.release();
            legacyProbe = null;
        }
        if (legacySession != null) {
            sessions.end(legacySession); // a legacy session lives as long as its stream
            legacySession = null;
        }
        if (!released) {
            released = true;
            if (tracked) {
                sessions.exchangeEnded(chain); // its session may be idle from now
            }
        }
    }
}
