package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * The answers an {@link Exchange} makes itself, in place of the upstream's: its errors (a 4xx or
 * 5xx with a JSON-RPC error body) and the answers faults inject. For each failure it reports it
 * to the observer, logs it, and says what the client is to get: an {@link ErrorAnswer}, or null when
 * the response has begun and the client's connection is cut instead. It decides nothing else and
 * calls nothing back: the exchange decides when one is due, writes it and ends.
 */
final class ProxyAnswers {

    /** The exchange's category, as its log lines always had. */
    private static final Logger log = LoggerFactory.getLogger(Exchange.class);

    /** An error the proxy answers with: its status, its JSON-RPC error's message, whether the connection may go on. */
    record ErrorAnswer(HttpResponseStatus status, String message, boolean keepAlive, String retryAfterSeconds) {
        ErrorAnswer(HttpResponseStatus status, String message) {
            this(status, message, true, null);
        }
    }

    private final ByteBufAllocator alloc;
    private final HttpRequest head;
    private final HttpVersion version;
    private final String sessionId;
    private final HttpProxyConfig config;

    /**
     * @param alloc     the client connection's allocator
     * @param head      the request's head: its version, which the answer speaks; its method and URI, which the log says
     * @param sessionId the session the request named, or null
     */
    ProxyAnswers(ByteBufAllocator alloc, HttpRequest head, String sessionId, HttpProxyConfig config) {
        this.alloc = alloc;
        this.head = head;
        this.version = head.protocolVersion();
        this.sessionId = sessionId;
        this.config = config;
    }

    /** What the observer calls the exchange ({@code POST /mcp}); made when a failure is reported. */
    private String label() {
        return head.method() + " " + head.uri();
    }

    /** The request body is over the limit ({@code size} bytes or more seen): 413, and the connection closes. */
    ErrorAnswer bodyTooLarge(long size) {
        config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.REQUEST_BODY,
                Direction.CLIENT_TO_SERVER, size);
        log.info("request body of {} bytes or more is over the limit of {} bytes: answered 413", size,
                config.settings.maxRequestBody());
        return new ErrorAnswer(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "mcp-chaos: request body over the limit of "
                + config.settings.maxRequestBody() + " bytes", false, null);
    }

    /**
     * The bytes held for all clients are at their ceiling: a new body is refused before it is
     * held, with a status a client retries (503, Retry-After), and the connection closed, since
     * the rest of the body is not read.
     */
    ErrorAnswer overBudget(BufferBudget buffers) {
        config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.BUFFERED,
                Direction.CLIENT_TO_SERVER, buffers.held());
        log.info("{} {}: the proxy holds {} bytes of bodies, its limit is {}: answered 503",
                head.method(), head.uri(), buffers.held(), buffers.limit());
        return new ErrorAnswer(HttpResponseStatus.SERVICE_UNAVAILABLE, "mcp-chaos: the proxy holds as many bytes of "
                + "bodies for its clients as it may (" + buffers.limit() + "); try again", false, "1");
    }

    /** No response head within the response timeout: 504. */
    ErrorAnswer upstreamSilent() {
        long ms = config.settings.responseTimeoutMillis;
        return upstreamFailed(TransportObserver.UpstreamFailure.TIMEOUT, label(), false, null,
                "the upstream did not answer within " + ms + " ms", HttpResponseStatus.GATEWAY_TIMEOUT,
                "did not answer within " + ms + " ms");
    }

    /** The body stopped coming for the response body timeout: 504 before the response began, a cut after. */
    ErrorAnswer bodyStopped(boolean begun) {
        String stopped = "the upstream's response body stopped coming for " + config.settings.responseBodyTimeoutMillis
                + " ms";
        return upstreamFailed(TransportObserver.UpstreamFailure.TIMEOUT, label() + " (body)", begun,
                stopped + ": closing the client's connection", stopped, HttpResponseStatus.GATEWAY_TIMEOUT,
                "stopped sending its response for " + config.settings.responseBodyTimeoutMillis + " ms");
    }

    /** The upstream closed its connection before the response all came: 502 before the response began, a cut after. */
    ErrorAnswer upstreamClosed(boolean begun) {
        return upstreamFailed(TransportObserver.UpstreamFailure.CLOSED, label() + (begun ? " (mid-response)" : ""),
                begun, "the upstream closed the connection mid-response; closing the client's",
                "the upstream closed the connection before answering", HttpResponseStatus.BAD_GATEWAY,
                "closed the connection before answering");
    }

    /** What the upstream sent is not valid HTTP: 502 before the response began, a cut after. */
    ErrorAnswer invalid(Throwable cause, boolean begun) {
        String reason = cause == null ? "unknown" : cause.getMessage() != null ? cause.getMessage() : cause.toString();
        return upstreamFailed(TransportObserver.UpstreamFailure.INVALID_RESPONSE, label() + ": " + reason, begun,
                "the upstream's response broke off as invalid HTTP (" + reason + "); closing the client's connection",
                "the upstream's response is not valid HTTP (" + reason + ")", HttpResponseStatus.BAD_GATEWAY,
                "sent a response that is not valid HTTP: " + reason);
    }

    /**
     * What every failure of the upstream's while it answers comes to: the observer is told,
     * then, once the response has begun, the client's connection is to be cut (null, logged
     * {@code whenBegun}); before, the client is answered {@code status} (logged {@code what} and
     * the status) with the message {@code mcp-chaos: the upstream <label> <answer>}.
     */
    private ErrorAnswer upstreamFailed(TransportObserver.UpstreamFailure failure, String observed, boolean begun,
                                       String whenBegun, String what, HttpResponseStatus status, String answer) {
        config.observer.upstreamFailed(TransportKind.HTTP, failure, observed);
        if (begun) {
            log.info("{} {}: {}", head.method(), head.uri(), whenBegun);
            return null;
        }
        log.info("{} {}: {}: answered {}", head.method(), head.uri(), what, status.code());
        return new ErrorAnswer(status, "mcp-chaos: the upstream " + config.upstreamLabel + " " + answer);
    }

    /** The upstream could not be reached: 502. */
    ErrorAnswer unreachable(Throwable cause) {
        String notTls = UpstreamFailures.notTls(cause, config.upstream);
        String reason = notTls != null ? notTls : String.valueOf(cause.getMessage());
        config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.UNREACHABLE, reason);
        log.info("{} {}: the upstream {} is unreachable ({}): answered 502",
                head.method(), head.uri(), config.upstreamLabel, reason);
        return new ErrorAnswer(HttpResponseStatus.BAD_GATEWAY, "mcp-chaos: " + (notTls != null ? notTls
                : "cannot reach the upstream " + config.upstreamLabel + ": " + cause.getMessage()));
    }

    /**
     * A fault closed the upstream connection before the answer: 502. Not an upstream failure:
     * the fault event names it; logged when the fault's close answers it at once.
     */
    ErrorAnswer upstreamCutByFault(boolean logged) {
        if (logged) {
            log.info("{} {}: the upstream connection was closed by a fault: answered 502", head.method(), head.uri());
        }
        return new ErrorAnswer(HttpResponseStatus.BAD_GATEWAY, "mcp-chaos: the upstream " + config.upstreamLabel
                + " closed the connection before answering (injected)");
    }

    /** The drain's deadline passed before the upstream answered: 503, and the connection closes. */
    ErrorAnswer drained() {
        log.info("{} {}: not answered when the drain timeout ran out: answered 503", head.method(), head.uri());
        return new ErrorAnswer(HttpResponseStatus.SERVICE_UNAVAILABLE, "mcp-chaos: the proxy is shutting down and the "
                + "upstream had not answered within the drain timeout", false, null);
    }

    /** A fault expired the request's session: 404, as every later request of the session is answered. */
    ErrorAnswer sessionExpired() {
        log.info("{} {}: session {} was expired by a fault: answered 404", head.method(), head.uri(), sessionId);
        return new ErrorAnswer(HttpResponseStatus.NOT_FOUND, "mcp-chaos: session " + sessionId + " expired (injected)");
    }

    /**
     * An error of the proxy's as a response: its status with a JSON-RPC error carrying the
     * request's {@code id} and the error's message; {@code Connection: close} unless it keeps the
     * connection alive, and its {@code Retry-After} if any.
     */
    FullHttpResponse response(ErrorAnswer error, Object id) {
        FullHttpResponse response = HttpMessages.jsonRpcError(alloc, version, error.status(), id, error.message());
        if (!error.keepAlive()) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        if (error.retryAfterSeconds() != null) {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, error.retryAfterSeconds());
        }
        return response;
    }

    /** A fault's JSON-RPC answer to the request (an error it made), as a 200 JSON response; takes {@code answer}. */
    FullHttpResponse fromFault(ByteBuf answer) {
        FullHttpResponse full = new DefaultFullHttpResponse(version, HttpResponseStatus.OK, answer);
        full.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, answer.readableBytes());
        if (sessionId != null) {
            full.headers().set(HttpMessages.MCP_SESSION_ID, sessionId);
        }
        return full;
    }

    /**
     * A fault's answer with a status and headers of its choice; takes {@code answer}. A body
     * with no content type of its own is JSON.
     */
    FullHttpResponse withStatus(int status, Map<String, String> headers, ByteBuf answer) {
        FullHttpResponse response = new DefaultFullHttpResponse(version, HttpResponseStatus.valueOf(status), answer);
        headers.forEach((name, value) -> response.headers().set(name, value));
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, answer.readableBytes());
        if (!response.headers().contains(HttpHeaderNames.CONTENT_TYPE) && answer.isReadable()) {
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        }
        return response;
    }
}
