package dev.mcpchaos.core.transport.http;

import java.util.Map;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.codec.sse.SseBoundary;
import dev.mcpchaos.core.codec.sse.SseEncoder;
import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.codec.sse.SseFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * One HTTP request from the client and the response to it: the route of every frame that
 * travels on it ({@link Frame#route()}). A POST body is one client-to-server frame; the answer is
 * one server-to-client frame (a JSON body) or a stream of them (SSE events); a GET opens a stream.
 *
 * <p>All state lives on the client connection's event loop. The chain's sinks, which run on the
 * chain's executor, hop here before touching it.
 */
final class Exchange implements HeaderSource {

    private static final Logger log = LoggerFactory.getLogger(Exchange.class);

    /** SSE events gathered into one chunk at most (a writev takes up to 1024 buffers). */
    private static final int MAX_EVENTS_PER_CHUNK = 256;

    /** One sniffer per event loop for whole bodies: it keeps caches worth keeping, and costs to make. */
    private static final FastThreadLocal<EnvelopeSniffer> SNIFFERS = new FastThreadLocal<>() {
        @Override
        protected EnvelopeSniffer initialValue() {
            return new EnvelopeSniffer();
        }
    };

    private enum Mode { AWAITING, JSON, SSE, RAW }

    private final FrontendHandler frontend;
    private final Channel downstream;
    private final HttpRequest head;
    private final boolean post;
    private final String sessionId;
    private final InterceptorChain chain;
    private final HttpProxyConfig config;

    /** The request body: the piece it came in, when it came whole, else gathered here. */
    private ByteBuf requestBody;
    /** Whether the client's connection stays open after this exchange, as its request said. */
    private final boolean clientKeepAlive;
    /** Whether the upstream's connection stays open after its response, as the response said. */
    private boolean upstreamKeepAlive = true;
    /**
     * The request's headers travel upstream in the request's own header object, changed in
     * place (no copy); the ones removed or replaced on the way (hop-by-hop, Host,
     * Content-Length) are kept here, as the client sent them, for {@link #requestHeader}.
     */
    private HttpHeaders clientOnlyHeaders;
    /** The request head went upstream (or is on its way) and its headers are the upstream's now. */
    private boolean headSent;
    private boolean requestComplete;
    private Object requestId;
    private boolean forwarded;
    private boolean answeredHere;

    private Mode mode = Mode.AWAITING;
    private HttpResponse responseHead;
    private ByteBuf responseBody;
    /** Where events end in an SSE response relayed unframed; null once it is framed (or not SSE). */
    private SseBoundary sseRelay;
    /** Frames an SSE response once an interceptor may act on its events; null until then. */
    private SseFrameDecoder sse;
    /** Frames the events of an SSE response relayed as it comes, for interceptors that only observe them. */
    private SseFrameDecoder sseWatch;
    private final SseFrameDecoder.FrameConsumer observeLent = this::observeLent;
    private boolean responded;
    private boolean done;
    /** A flush of the client connection is queued on its event loop (see {@link #flushSoon}). */
    private boolean flushPending;
    /**
     * The SSE bytes relayed as read, or the events the chain let through, since the last flush:
     * written as one chunk when the flush comes, instead of a chunk (size line, bytes, CRLF, and a
     * write promise) per read or per event.
     */
    private CompositeByteBuf sseOut;
    private String contentTypeOverride;
    private CompositeByteBuf bodyPrefix;
    /** Bytes a fault made before (or instead of) the request's message, for the POST body. */
    private CompositeByteBuf requestPrefix;
    /** The upstream's response has all arrived (its last content); what remains is passing the chain. */
    private boolean responseReceived;
    /** A fault (blackhole) keeps this response from ending: the client waits until it gives up. */
    private boolean stalled;
    /** A fault closed the upstream connection after the whole JSON answer had come. */
    private boolean upstreamCutByFault;
    /** The client's connection closed before this exchange was done. */
    private boolean clientGone;
    /** A GET stream with no session: its first event may be the legacy transport's {@code endpoint}. */
    private boolean legacyProbe;
    /** Frames the start of such a stream, until its first event; null otherwise. */
    private SseFrameDecoder legacyEndpoint;
    private long legacyProbeBytes;
    /** The legacy session this GET stream named, ended with the stream. */
    private String legacySession;

    Exchange(FrontendHandler frontend, Channel downstream, HttpRequest head, HttpProxyConfig config,
             HttpSessions sessions) {
        this.frontend = frontend;
        this.downstream = downstream;
        this.head = head;
        this.config = config;
        this.post = HttpMethod.POST.equals(head.method());
        this.sessionId = head.headers().get(HttpMessages.MCP_SESSION_ID);
        this.clientKeepAlive = HttpUtil.isKeepAlive(head);
        String legacy = sessionId == null ? HttpMessages.legacySessionId(head.uri()) : null;
        this.chain = legacy != null ? sessions.chainForLegacy(legacy, downstream.eventLoop())
                : sessions.chainFor(sessionId, downstream.eventLoop());
        // A legacy GET /sse stream names its session in its first event (endpoint): watch for it.
        this.legacyProbe = !post && sessionId == null && HttpMethod.GET.equals(head.method());
    }

    /** A request header as the client sent it, even one the proxy removed or replaced upstream. */
    @Override
    public String requestHeader(String name) {
        if (clientOnlyHeaders != null) {
            String value = clientOnlyHeaders.get(name);
            if (value != null) {
                return value;
            }
        }
        return head.headers().get(name);
    }

    boolean requestComplete() {
        return requestComplete;
    }

    /**
     * Whether this exchange used the upstream connection and left it ready for another request:
     * its request went whole, its response came whole, and the upstream said keep-alive.
     */
    boolean leftUpstreamIdle() {
        return forwarded && requestComplete && responseReceived && upstreamKeepAlive && !answeredHere;
    }

    boolean isDone() {
        return done;
    }

    InterceptorChain chain() {
        return chain;
    }

    String sessionId() {
        return sessionId;
    }

    // ---- the request ---------------------------------------------------------------------------------

    /** The request's head arrived. */
    void onRequestHead() {
        if (!post && frontend.sessions().isExpired(sessionId)) {
            answerExpired();
            return;
        }
        if (post) {
            long declared = HttpUtil.getContentLength(head, -1L);
            if (declared > config.maxRequestBody) {
                rejectBody(declared);
            }
        } else {
            // GET (the SSE stream), DELETE, OPTIONS...: nothing to intercept; forward the head now.
            forwarded = true;
            frontend.sendUpstream(this, prepareForUpstream(head));
            startResponseTimeout();
        }
    }

    /** A piece of the request body arrived; takes ownership. */
    void onRequestContent(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        if (done) {
            content.release();
        } else if (post) {
            try {
                ByteBuf bytes = content.content();
                long size = (requestBody == null ? 0L : requestBody.readableBytes()) + bytes.readableBytes();
                if (size > config.maxRequestBody) {
                    rejectBody(size);
                    return;
                }
                requestBody = gather(requestBody, bytes, last, HttpUtil.getContentLength(head, -1L),
                        64 * 1024, config.maxRequestBody);
            } finally {
                content.release();
            }
            if (last) {
                requestComplete = true;
                onRequestBody();
            }
        } else {
            frontend.sendUpstream(this, content);
            requestComplete |= last;
        }
    }

    private void rejectBody(long size) {
        config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.REQUEST_BODY,
                Direction.CLIENT_TO_SERVER, size);
        log.info("request body of {} bytes or more is over the limit of {} bytes: answered 413", size,
                config.maxRequestBody);
        releaseRequestBody();
        requestComplete = true;
        respondWithError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, null,
                "mcp-chaos: request body over the limit of " + config.maxRequestBody + " bytes", false);
    }

    private void onRequestBody() {
        ByteBuf body = requestBody != null ? requestBody : Unpooled.EMPTY_BUFFER;
        requestBody = null;
        if (frontend.sessions().isExpired(sessionId)) {
            requestId = SNIFFERS.get().sniff(body).id();
            body.release();
            answerExpired();
            return;
        }
        if (!body.isReadable()) {
            body.release();
            forwarded = true;
            frontend.sendUpstream(this, fullRequest(Unpooled.EMPTY_BUFFER));
            startResponseTimeout();
            return;
        }
        Envelope envelope = SNIFFERS.get().sniff(body);
        requestId = envelope.id();
        Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.CLIENT_TO_SERVER,
                chain.session().nextSequence(Direction.CLIENT_TO_SERVER));
        frame.route(this);
        process(frame);
        if (!forwarded && !done) {
            // Only when the request did not go at once: its end travels behind what holds it.
            chain.endRoute(this, Direction.CLIENT_TO_SERVER, () -> onLoop(null, this::requestEnded));
        }
    }

    /** The chain let a client-to-server frame through: send it upstream. On the chain's executor. */
    void sendRequest(Frame frame) {
        onLoop(frame, () -> {
            if (done || answeredHere) {
                discard(frame, done && !responded ? TransportObserver.DiscardReason.CLIENT_GONE
                        : TransportObserver.DiscardReason.RESPONSE_ENDED);
                return;
            }
            if (!forwarded && !frame.isOriginal() && !isMessage(frame)) {
                // Bytes a fault made that are no message (noise before the request, or the request
                // corrupted): a POST body carries one message, so they lead it, or are the body
                // when no message follows (the route's end, see requestEnded).
                requestPrefix = appendLine(requestPrefix, frame);
                return;
            }
            if (forwarded) {
                // A second frame for one request (a duplicate): the client asked once, so its
                // answer can only be the first one. Send the copy on a connection of its own.
                frontend.sendShadow(shadowRequest(frame.content().retainedSlice()));
                frame.release();
                return;
            }
            ByteBuf body = frame.content().retainedSlice();
            frame.release();
            if (requestPrefix != null) {
                body = requestPrefix.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'}))
                        .addComponent(true, body);
                requestPrefix = null;
            }
            forwardBody(body);
        });
    }

    private void forwardBody(ByteBuf body) {
        forwarded = true;
        frontend.sendUpstream(this, fullRequest(body));
        startResponseTimeout();
    }

    /** The request's frame has left the chain (or was dropped): what a fault made of it that is no message goes alone. */
    private void requestEnded() {
        if (!forwarded && !done && !answeredHere && requestPrefix != null) {
            ByteBuf body = requestPrefix;
            requestPrefix = null;
            forwardBody(body);
        }
    }

    /** The request to send upstream, in the client's header object, changed in place. */
    private FullHttpRequest fullRequest(ByteBuf body) {
        HttpHeaders headers = head.headers();
        prepareHeaders(headers);
        String length = Integer.toString(body.readableBytes());
        String declared = headers.get(HttpHeaderNames.CONTENT_LENGTH);
        if (!length.equals(declared)) {
            if (declared != null) {
                keepClientHeader(HttpHeaderNames.CONTENT_LENGTH, headers.getAll(HttpHeaderNames.CONTENT_LENGTH));
            }
            headers.set(HttpHeaderNames.CONTENT_LENGTH, length);
        }
        return new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri(), body, headers,
                EmptyHttpHeaders.INSTANCE);
    }

    /** A duplicate of the request, with headers of its own: the original's may still be on their way. */
    private FullHttpRequest shadowRequest(ByteBuf body) {
        FullHttpRequest request = new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri(), body,
                head.headers().copy(), EmptyHttpHeaders.INSTANCE);
        HttpMessages.removeHopByHop(request.headers());
        if (config.rewriteHost) {
            request.headers().set(HttpHeaderNames.HOST, config.upstreamHostHeader);
        }
        request.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return request;
    }

    /** A head with no body to intercept (GET, DELETE, ...), made ready for upstream in place. */
    private HttpRequest prepareForUpstream(HttpRequest request) {
        boolean chunked = HttpUtil.isTransferEncodingChunked(request);
        prepareHeaders(request.headers());
        if (chunked) {
            HttpUtil.setTransferEncodingChunked(request, true);
        }
        return request;
    }

    /** Removes hop-by-hop headers and rewrites Host if asked, keeping what the client sent. Once. */
    private void prepareHeaders(HttpHeaders headers) {
        if (headSent) {
            return;
        }
        headSent = true;
        clientOnlyHeaders = HttpMessages.removeHopByHop(headers, clientOnlyHeaders, true);
        if (config.rewriteHost) {
            keepClientHeader(HttpHeaderNames.HOST, headers.getAll(HttpHeaderNames.HOST));
            headers.set(HttpHeaderNames.HOST, config.upstreamHostHeader);
        }
    }

    private void keepClientHeader(CharSequence name, List<String> values) {
        if (values.isEmpty()) {
            return;
        }
        if (clientOnlyHeaders == null) {
            clientOnlyHeaders = new DefaultHttpHeaders();
        }
        if (!clientOnlyHeaders.contains(name)) {
            clientOnlyHeaders.add(name, values);
        }
    }

    /**
     * Adds a piece of a body to what was gathered so far and returns the body. A body that comes
     * whole in one piece is kept as it is, a retained slice of what was read, with no copy,
     * unless that piece pins a much larger buffer (a request held by a latency fault would then
     * hold all of it); otherwise the pieces are copied into a heap buffer of their own.
     */
    private ByteBuf gather(ByteBuf gathered, ByteBuf piece, boolean last, long declared, int initialLimit,
                           int maxCapacity) {
        if (gathered == null) {
            ByteBuf parent = piece.unwrap();
            if (last && (parent == null || parent.capacity() <= 2L * piece.readableBytes() + 8192)) {
                return piece.retain();
            }
            gathered = downstream.alloc().heapBuffer(
                    (int) Math.max(256, Math.min(Math.max(declared, piece.readableBytes()), initialLimit)), maxCapacity);
        }
        return gathered.writeBytes(piece);
    }

    private void startResponseTimeout() {
        if (config.responseTimeoutMillis > 0) {
            frontend.startResponseTimer(this, config.responseTimeoutMillis);
        }
    }

    /**
     * A body that is not an SSE stream must keep coming: the deadline moves with every piece
     * (one timer per connection serves both deadlines, see {@link FrontendHandler#startResponseTimer}).
     */
    private void awaitMoreBody() {
        if (config.responseBodyTimeoutMillis > 0) {
            frontend.startResponseTimer(this, config.responseBodyTimeoutMillis);
        }
    }

    /**
     * The upstream did not answer within the response timeout, or its body stopped coming for the
     * response body timeout (see {@link FrontendHandler#startResponseTimer}).
     */
    void onResponseTimeout() {
        if (responseHead != null && !responseReceived && !done && mode != Mode.SSE) {
            config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.TIMEOUT,
                    head.method() + " " + head.uri() + " (body)");
            frontend.closeUpstream();
            answeredHere = true;
            if (!responded) {
                log.info("{} {}: the upstream's response body stopped coming for {} ms: answered 504", head.method(),
                        head.uri(), config.responseBodyTimeoutMillis);
                respondWithError(HttpResponseStatus.GATEWAY_TIMEOUT, requestId, "mcp-chaos: the upstream "
                        + config.upstreamLabel + " stopped sending its response for "
                        + config.responseBodyTimeoutMillis + " ms", true);
            } else {
                log.info("{} {}: the upstream's response body stopped coming for {} ms: closing the client's connection",
                        head.method(), head.uri(), config.responseBodyTimeoutMillis);
                cutClient();
            }
            return;
        }
        if (responseHead == null && !done) {
            config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.TIMEOUT,
                    head.method() + " " + head.uri());
            log.info("{} {}: the upstream did not answer within {} ms: answered 504", head.method(), head.uri(),
                    config.responseTimeoutMillis);
            frontend.closeUpstream();
            respondWithError(HttpResponseStatus.GATEWAY_TIMEOUT, requestId, "mcp-chaos: the upstream "
                    + config.upstreamLabel + " did not answer within " + config.responseTimeoutMillis + " ms", true);
        }
    }

    // ---- the response ------------------------------------------------------------------------------------

    /** Something came from the upstream connection for this exchange; takes ownership. */
    void onUpstream(Object message) {
        if (done || answeredHere) {
            ReferenceCountUtil.release(message);
            return;
        }
        if (message instanceof HttpObject && ((HttpObject) message).decoderResult().isFailure()) {
            Throwable cause = ((HttpObject) message).decoderResult().cause();
            ReferenceCountUtil.release(message);
            onInvalidResponse(cause);
            return;
        }
        if (message instanceof HttpResponse) {
            onResponseHead((HttpResponse) message);
        }
        if (message instanceof HttpContent) {
            onResponseContent((HttpContent) message);
        } else if (!(message instanceof HttpResponse)) {
            ReferenceCountUtil.release(message);
        }
    }

    private void onResponseHead(HttpResponse response) {
        if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
            return; // 100 Continue and friends: the final answer follows
        }
        frontend.stopResponseTimer(this);
        responseHead = response;
        upstreamKeepAlive = HttpUtil.isKeepAlive(response);
        trackSession(response);
        HttpHeaders headers = response.headers();
        boolean hasBody = !HttpMethod.HEAD.equals(head.method())
                && response.status().code() != 204 && response.status().code() != 304;
        if (hasBody && response.status().code() == 200 && HttpMessages.isEventStream(headers)) {
            mode = Mode.SSE;
            // Relayed as it comes until an interceptor wants its events (see onSseContent).
            sseRelay = new SseBoundary();
            HttpResponse out = copyHead(response);
            out.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
            HttpUtil.setTransferEncodingChunked(out, true);
            writeHead(out);
        } else if (hasBody && HttpMessages.isJson(headers)
                && HttpUtil.getContentLength(response, 0L) <= config.maxJsonResponseBody) {
            mode = Mode.JSON;
            awaitMoreBody();
        } else {
            if (hasBody) {
                awaitMoreBody();
            }
            mode = Mode.RAW;
            HttpResponse out = copyHead(response);
            if (hasBody && !HttpUtil.isContentLengthSet(response)) {
                HttpUtil.setTransferEncodingChunked(out, true);
            }
            writeHead(out);
        }
    }

    private void trackSession(HttpResponse response) {
        String named = response.headers().get(HttpMessages.MCP_SESSION_ID);
        if (named != null && sessionId == null) {
            frontend.sessions().learn(named, chain);
        }
        if (sessionId != null && (response.status().code() == 404
                || HttpMethod.DELETE.equals(head.method()) && response.status().codeClass()
                == HttpStatusClass.SUCCESS)) {
            frontend.sessions().end(sessionId);
        }
    }

    private void onResponseContent(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        responseReceived |= last;
        switch (mode) {
            case SSE: {
                try {
                    onSseContent(content.content(), last);
                } finally {
                    content.release();
                }
                if (last) {
                    // The end travels through the chain behind the stream's events, after any a
                    // fault still holds: the client gets every event, then the end.
                    afterHeld(this::endStream);
                }
                break;
            }
            case JSON: {
                ByteBuf bytes = content.content();
                long size = (responseBody == null ? 0L : responseBody.readableBytes()) + bytes.readableBytes();
                if (size > config.maxJsonResponseBody) {
                    // Too big to hold: pass it through as it comes, uninspected.
                    log.info("{} {}: JSON response over {} bytes: relayed without interception", head.method(),
                            head.uri(), config.maxJsonResponseBody);
                    mode = Mode.RAW;
                    HttpResponse out = copyHead(responseHead);
                    HttpUtil.setTransferEncodingChunked(out, !HttpUtil.isContentLengthSet(responseHead));
                    writeHead(out);
                    if (responseBody != null) {
                        downstream.write(new DefaultHttpContent(responseBody));
                        responseBody = null;
                    }
                    onResponseContent(content);
                    return;
                }
                try {
                    responseBody = gather(responseBody, bytes, last, HttpUtil.getContentLength(responseHead, 1024L),
                            1 << 20, Integer.MAX_VALUE);
                } finally {
                    content.release();
                }
                if (!last) {
                    awaitMoreBody();
                } else {
                    frontend.stopResponseTimer(this);
                }
                if (last) {
                    ByteBuf body = responseBody;
                    responseBody = null;
                    Envelope envelope = SNIFFERS.get().sniff(body);
                    Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.SERVER_TO_CLIENT,
                            chain.session().nextSequence(Direction.SERVER_TO_CLIENT));
                    frame.route(this);
                    process(frame);
                    if (!responded && !done) {
                        afterHeld(this::jsonBodyEnded); // only when the answer did not go at once
                    }
                }
                break;
            }
            default:
                downstream.writeAndFlush(content.retain());
                content.release();
                if (last) {
                    complete();
                } else {
                    awaitMoreBody();
                }
                break;
        }
    }

    /**
     * A piece of an SSE response body; does not take ownership. While no interceptor inspects
     * server-to-client frames (no rules, nothing held, no metrics), the bytes go to the client as
     * they came, without framing or sniffing a single event: the stream's cost is then that of
     * relaying bytes. While the interceptors that inspect them only observe them (metrics, the
     * event log: {@link InterceptorChain#onlyObserves}), the bytes still go as they came, and
     * each event is also framed and sniffed for the observers ({@link #watch}). Once an
     * interceptor may act on events, framing begins where the next event begins, and every event
     * from there on passes the chain; the stream stays framed to its end (frames may be in the
     * chain's hands, and raw bytes must not overtake them).
     */
    private void onSseContent(ByteBuf bytes, boolean last) {
        if (legacyProbe) {
            probeLegacyEndpoint(bytes);
        }
        if (sseRelay != null) {
            boolean inspects = chain.inspects(Direction.SERVER_TO_CLIENT);
            if (!inspects || chain.onlyObserves(Direction.SERVER_TO_CLIENT)) {
                relayWatched(bytes, inspects);
                if (last) {
                    finishWatch();
                }
                return;
            }
            int from = bytes.readerIndex();
            int start = sseRelay.eventStart(bytes);
            if (start < 0) {
                watch(bytes); // the event in progress goes on past this piece
                relaySse(bytes.retain());
                if (last) {
                    finishWatch();
                }
                return;
            }
            if (start > from) {
                ByteBuf before = bytes.retainedSlice(from, start - from);
                watch(before);
                relaySse(before);
            }
            finishWatch(); // at an event's start: it holds nothing
            sseRelay = null;
            sse = newSseDecoder();
            bytes = bytes.slice(start, bytes.writerIndex() - start);
        }
        List<Frame> frames = new ArrayList<>();
        sse.decode(bytes.retain(), frames::add);
        if (last) {
            sse.finish(frames::add);
        }
        for (Frame frame : frames) {
            frame.route(this);
        }
        if (!frames.isEmpty()) {
            process(frames);
        }
    }

    /**
     * Looks at the start of a GET stream with no session for the legacy HTTP+SSE transport's
     * {@code endpoint} event ({@code data: /message?sessionId=...}): its session then takes this
     * exchange's chain, so that the requests POSTed there and the responses on this stream are
     * correlated (rules on {@code kind: response} and {@code tool} match). Learnt before the event
     * is relayed, so the client cannot POST before the proxy knows. Gives up after the first
     * event, or 4 KiB without one. Does not take ownership.
     */
    private void probeLegacyEndpoint(ByteBuf bytes) {
        if (legacyEndpoint == null) {
            legacyEndpoint = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(4096, downstream.alloc()),
                    () -> 0L);
        }
        List<Frame> frames = new ArrayList<>(1);
        legacyEndpoint.decode(bytes.retain(), frames::add);
        boolean decided = false;
        for (Frame frame : frames) {
            try {
                if (!decided && frame.contentLength() > 0) {
                    decided = true;
                    Object framing = frame.framing();
                    if (framing instanceof SseFields && "endpoint".equals(((SseFields) framing).eventType())) {
                        String named = HttpMessages.legacySessionId(frame.content().toString(StandardCharsets.UTF_8));
                        if (named != null) {
                            legacySession = named;
                            frontend.sessions().learn(named, chain);
                        }
                    }
                }
            } finally {
                frame.release();
            }
        }
        legacyProbeBytes += bytes.readableBytes();
        if (decided || legacyProbeBytes > 4096) {
            stopLegacyProbe();
        }
    }

    private void stopLegacyProbe() {
        legacyProbe = false;
        if (legacyEndpoint != null) {
            legacyEndpoint.finish(Frame::release);
            legacyEndpoint = null;
        }
    }

    private SseFrameDecoder newSseDecoder() {
        return new SseFrameDecoder(Direction.SERVER_TO_CLIENT,
                new SseFramer(config.maxSseEventSize, downstream.alloc()),
                () -> chain.session().nextSequence(Direction.SERVER_TO_CLIENT))
                .onOversized(size -> config.observer.limitBreached(TransportKind.HTTP,
                        TransportObserver.Limit.SSE_EVENT_SIZE, Direction.SERVER_TO_CLIENT, size));
    }

    /**
     * Relays a piece of an SSE body as it came; while observers want its events, they see them
     * too, from the first event that begins after they started to.
     */
    private void relayWatched(ByteBuf bytes, boolean inspected) {
        if (inspected && sseWatch == null) {
            int start = sseRelay.eventStart(bytes);
            if (start >= 0) {
                ByteBuf rest = bytes.slice(start, bytes.writerIndex() - start);
                sseRelay.passed(rest);
                sseWatch = newSseDecoder().watchingRelayedBytes();
                watch(rest);
            }
        } else {
            sseRelay.passed(bytes);
            watch(bytes);
        }
        relaySse(bytes.retain());
    }

    /**
     * Frames and sniffs relayed bytes for the observers, when they are watched; does not take
     * ownership. The frames only show the observers what passed: their bytes are relayed as they
     * came, so an event over the size limit is reported, not dropped (nothing holds it).
     */
    private void watch(ByteBuf bytes) {
        if (sseWatch == null) {
            return;
        }
        if (chain.executor().inEventLoop()) {
            // Observers keep nothing of a frame and run now: each event is lent to them as a view
            // of the chunk, with no reference counting and no list per chunk.
            sseWatch.decodeLent(bytes.retain(), observeLent);
            return;
        }
        // The session's chain runs on another event loop: the frames must outlive this call.
        List<Frame> frames = new ArrayList<>();
        sseWatch.decode(bytes.retain(), frames::add);
        observe(frames);
    }

    /** Shows one lent frame to the observers, now: the chain runs on this event loop. */
    private void observeLent(Frame frame) {
        frame.route(this);
        chain.observe(frame);
    }

    /** The watched part of the stream ends: the observers see what the watcher still held. */
    private void finishWatch() {
        if (sseWatch == null) {
            return;
        }
        List<Frame> frames = new ArrayList<>();
        SseFrameDecoder watcher = sseWatch;
        sseWatch = null;
        watcher.finish(frames::add);
        observe(frames);
    }

    private void observe(List<Frame> frames) {
        if (frames.isEmpty()) {
            return;
        }
        for (Frame frame : frames) {
            frame.route(this);
        }
        try {
            chain.observe(frames);
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    private void relaySse(ByteBuf bytes) {
        if (!bytes.isReadable()) {
            bytes.release();
            return;
        }
        queueSse(bytes);
    }

    /**
     * Queues SSE bytes (raw as read, or an event the chain let through) for the client; takes
     * ownership. What is queued before a flush goes out as one HTTP chunk.
     */
    private void queueSse(ByteBuf bytes) {
        if (sseOut == null) {
            sseOut = downstream.alloc().compositeBuffer(MAX_EVENTS_PER_CHUNK);
        }
        sseOut.addComponent(true, bytes);
        if (sseOut.numComponents() >= MAX_EVENTS_PER_CHUNK) {
            writeSseOut();
        }
        flushSoon();
    }

    /** The chain let a server-to-client frame through (or a fault made one): send it to the client. */
    void sendResponse(Frame frame) {
        onLoop(frame, () -> {
            if (done) {
                discard(frame, clientGone ? TransportObserver.DiscardReason.CLIENT_GONE
                        : TransportObserver.DiscardReason.RESPONSE_ENDED);
                return;
            }
            switch (mode) {
                case SSE:
                    ByteBuf event = frame.isOriginal() ? frame.wire().retainedSlice() : encodeEvent(frame);
                    frame.release();
                    queueSse(event);
                    break;
                case JSON: {
                    if (!frame.isOriginal() && !isMessage(frame)) {
                        // Bytes a fault made that are no message (noise, or the answer corrupted):
                        // a JSON body has one message, so they lead it, as if the server had
                        // printed them, or are the body when no message follows (the route's end).
                        bodyPrefix = appendLine(bodyPrefix, frame);
                        break;
                    }
                    ByteBuf body = frame.content().retainedSlice();
                    frame.release();
                    if (bodyPrefix != null) {
                        body = bodyPrefix.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'}))
                                .addComponent(true, body);
                        bodyPrefix = null;
                    }
                    writeJsonBody(body);
                    break;
                }
                case AWAITING: {
                    // A fault answered the request itself (an error): the upstream never saw it, or
                    // its late answer will be thrown away with its connection.
                    answeredHere = true;
                    if (forwarded) {
                        frontend.closeUpstream();
                    }
                    ByteBuf body = frame.content().retainedSlice();
                    frame.release();
                    FullHttpResponse full = new DefaultFullHttpResponse(head.protocolVersion(), HttpResponseStatus.OK,
                            body);
                    full.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                            .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                    if (sessionId != null) {
                        full.headers().set(HttpMessages.MCP_SESSION_ID, sessionId);
                    }
                    responded = true;
                    downstream.writeAndFlush(full);
                    complete();
                    break;
                }
                default:
                    log.warn("{}: no way to send {} on a response relayed as is", head.uri(), frame);
                    frame.release();
                    break;
            }
        });
    }

    /** Writes the JSON answer with this body, the upstream's head made ready, and completes. */
    private void writeJsonBody(ByteBuf body) {
        HttpResponse out = copyHead(responseHead);
        FullHttpResponse full = new DefaultFullHttpResponse(out.protocolVersion(), out.status(), body,
                out.headers(), EmptyHttpHeaders.INSTANCE);
        full.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        responded = true;
        downstream.writeAndFlush(full);
        complete();
    }

    /** Adds a frame's content to {@code lines} (one line each, newline-separated); takes the frame. */
    private CompositeByteBuf appendLine(CompositeByteBuf lines, Frame frame) {
        if (lines == null) {
            lines = downstream.alloc().compositeBuffer();
        } else {
            lines.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'}));
        }
        lines.addComponent(true, frame.content().retainedSlice());
        frame.release();
        return lines;
    }

    /**
     * The JSON answer's frame has left the chain, or was dropped, or became something else: the
     * end of its route. What a fault made of it that is no message is the body now; an upstream
     * a fault closed after its answer came, with the answer dropped, is a 502; a dropped answer
     * leaves the client waiting, as a lost answer does.
     */
    private void jsonBodyEnded() {
        if (done || responded) {
            return;
        }
        if (bodyPrefix != null) {
            ByteBuf body = bodyPrefix;
            bodyPrefix = null;
            writeJsonBody(body);
        } else if (upstreamCutByFault) {
            answeredHere = true;
            respondWithError(HttpResponseStatus.BAD_GATEWAY, requestId, "mcp-chaos: the upstream "
                    + config.upstreamLabel + " closed the connection before answering (injected)", true);
        }
    }

    /**
     * The SSE event for a frame a fault made: with the id and event type of the event it
     * replaces (a rewrite, a copy), so a client's {@code Last-Event-ID} still names its place.
     */
    private ByteBuf encodeEvent(Frame frame) {
        Object framing = frame.framing();
        if (framing instanceof SseFields) {
            SseFields fields = (SseFields) framing;
            return SseEncoder.encode(downstream.alloc(), frame.content(), fields.eventType(), fields.id());
        }
        return SseEncoder.encode(downstream.alloc(), frame.content());
    }

    /**
     * Flushes the client connection once the event loop is done with what it is doing now: the
     * events of one upstream read go out in one write instead of one system call each. An event
     * a fault delays is flushed in its own turn of the loop, so nothing waits for the next read.
     */
    private void flushSoon() {
        if (flushPending) {
            return;
        }
        flushPending = true;
        try {
            downstream.eventLoop().execute(() -> {
                flushPending = false;
                writeSseOut();
                downstream.flush();
            });
        } catch (RejectedExecutionException e) {
            flushPending = false;
            writeSseOut();
            downstream.flush(); // shutting down: flush now rather than never
        }
    }

    /** Writes the SSE events gathered since the last flush as one HTTP chunk. */
    private void writeSseOut() {
        CompositeByteBuf events = sseOut;
        if (events == null) {
            return;
        }
        sseOut = null;
        if (done) {
            events.release();
        } else {
            downstream.write(new DefaultHttpContent(events));
        }
    }

    /** The SSE stream's end, once every event of it has left the chain. On the loop. */
    private void endStream() {
        if (done) {
            return;
        }
        writeSseOut();
        if (stalled) {
            // The events went out; the end does not, so the client waits as on a silent server.
            downstream.flush();
            log.debug("{} {}: the end of the SSE stream is held back by a fault", head.method(), head.uri());
            return;
        }
        downstream.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        complete();
    }

    /** A fault keeps this response from ending (see {@link ConnectionControl#stallResponse}). */
    void stall() {
        onLoop(null, () -> stalled = true);
    }

    /** The upstream connection closed while this exchange was waiting on it. */
    void onUpstreamClosed() {
        if (done || answeredHere || !forwarded || responseReceived) {
            // A response that had all arrived (one delimited by the connection's end, or followed
            // by the close its Connection: close announced) is still on its way through the chain.
            return;
        }
        config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.CLOSED,
                head.method() + " " + head.uri() + (responded ? " (mid-response)" : ""));
        if (!responded) {
            log.info("{} {}: the upstream closed the connection before answering: answered 502", head.method(),
                    head.uri());
            respondWithError(HttpResponseStatus.BAD_GATEWAY, requestId, "mcp-chaos: the upstream "
                    + config.upstreamLabel + " closed the connection before answering", true);
        } else {
            // Mid-response: the client must see the stream end abruptly, as it did upstream, but
            // only after the SSE events that had all arrived before the close have passed the chain.
            log.info("{} {}: the upstream closed the connection mid-response; closing the client's", head.method(),
                    head.uri());
            if (mode == Mode.SSE) {
                afterHeld(this::cutClient);
            } else {
                cutClient();
            }
        }
    }

    /** Closes the client's connection without a proper end, after what was queued for it. */
    private void cutClient() {
        if (!done) {
            writeSseOut(); // what arrived before the break still goes out
            downstream.flush();
            done = true;
            frontend.stopResponseTimer(this);
            releaseHeld();
            downstream.close();
        }
    }

    /**
     * What the upstream sent is not valid HTTP (Netty's decoder said so): never passed on as if
     * it were. Before the response began the client gets a 502 with a JSON-RPC error; after, its
     * connection is cut (a clean end would present a broken body as complete).
     */
    void onInvalidResponse(Throwable cause) {
        if (done) {
            return;
        }
        String reason = cause == null ? "unknown" : cause.getMessage() != null ? cause.getMessage() : cause.toString();
        config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.INVALID_RESPONSE,
                head.method() + " " + head.uri() + ": " + reason);
        frontend.closeUpstream(); // a decoder that failed reads nothing more of this connection
        answeredHere = true;
        if (!responded) {
            log.info("{} {}: the upstream's response is not valid HTTP ({}): answered 502", head.method(), head.uri(),
                    reason);
            respondWithError(HttpResponseStatus.BAD_GATEWAY, requestId, "mcp-chaos: the upstream "
                    + config.upstreamLabel + " sent a response that is not valid HTTP: " + reason, true);
        } else {
            log.info("{} {}: the upstream's response broke off as invalid HTTP ({}); closing the client's connection",
                    head.method(), head.uri(), reason);
            if (mode == Mode.SSE) {
                afterHeld(this::cutClient); // the events that came whole first
            } else {
                cutClient();
            }
        }
    }

    /** The upstream could not be reached, or failed other than on its socket. */
    void onUpstreamUnreachable(Throwable cause) {
        // A decoder's failure is a response that is not HTTP; TLS failures come wrapped the same
        // way but mean the upstream could not be reached safely.
        if (cause instanceof io.netty.handler.codec.DecoderException
                && !(cause.getCause() instanceof javax.net.ssl.SSLException)) {
            onInvalidResponse(cause.getCause() != null ? cause.getCause() : cause);
            return;
        }
        if (done || responded) {
            return;
        }
        config.observer.upstreamFailed(TransportKind.HTTP, TransportObserver.UpstreamFailure.UNREACHABLE,
                String.valueOf(cause.getMessage()));
        log.info("{} {}: the upstream {} is unreachable ({}): answered 502", head.method(), head.uri(),
                config.upstreamLabel, cause.getMessage());
        respondWithError(HttpResponseStatus.BAD_GATEWAY, requestId, "mcp-chaos: cannot reach the upstream "
                + config.upstreamLabel + ": " + cause.getMessage(), true);
    }

    /** A fault closes the client's connection of this exchange. */
    void closeClient() {
        onLoop(null, () -> {
            cutClient(); // what was let through before the fault's message still goes first
            frontend.closeClient();
        });
    }

    /**
     * A fault closes the upstream connection of this exchange: the client sees what a server that
     * went away looks like through a proxy, a 502 with a JSON-RPC error before the response began,
     * a cut stream after. Not an upstream failure: the fault event names it.
     */
    void closeUpstream() {
        onLoop(null, () -> {
            frontend.closeUpstream();
            if (done || answeredHere) {
                return;
            }
            if (mode == Mode.SSE && responded) {
                // As if the server went away at this event: nothing after it reaches the client.
                cutClient();
                return;
            }
            if (responseReceived) {
                // The whole answer had come: it still goes if the chain lets it through; if the
                // fault dropped it, its end answers 502 (see jsonBodyEnded).
                upstreamCutByFault = true;
                return;
            }
            if (!responded) {
                answeredHere = true;
                log.info("{} {}: the upstream connection was closed by a fault: answered 502", head.method(),
                        head.uri());
                respondWithError(HttpResponseStatus.BAD_GATEWAY, requestId, "mcp-chaos: the upstream "
                        + config.upstreamLabel + " closed the connection before answering (injected)", true);
            } else {
                afterHeld(this::cutClient);
            }
        });
    }

    /** The client's connection closed: let go of everything. */
    void abort() {
        clientGone = true;
        done = true;
        frontend.stopResponseTimer(this);
        releaseHeld();
    }

    /**
     * Lets go of every buffer this exchange holds: the request body, a response body being
     * gathered, SSE framing state, bytes waiting for a flush, a prefix. Every way out of an
     * exchange (answered, answered with an error, cut, abandoned by its client) comes here.
     */
    private void releaseHeld() {
        releaseRequestBody();
        if (requestPrefix != null) {
            requestPrefix.release();
            requestPrefix = null;
        }
        stopLegacyProbe();
        if (legacySession != null) {
            frontend.sessions().end(legacySession); // a legacy session lives as long as its stream
            legacySession = null;
        }
        if (responseBody != null) {
            responseBody.release();
            responseBody = null;
        }
        releaseSse();
        if (bodyPrefix != null) {
            bodyPrefix.release();
            bodyPrefix = null;
        }
    }

    /**
     * Lets go of a partly gathered SSE event: every way an exchange ends goes through here, so
     * an event the upstream cut off (a close mid-event) is not left holding its buffer.
     * Finishing twice is harmless.
     */
    private void releaseSse() {
        if (sse != null) {
            sse.finish(Frame::release);
        }
        if (sseWatch != null) {
            sseWatch.finish(Frame::release);
            sseWatch = null;
        }
        if (sseOut != null) {
            sseOut.release();
            sseOut = null;
        }
    }

    /**
     * A fault expired this exchange's session at its request: answered like every later request
     * of the session, 404 with the JSON-RPC error, and never forwarded.
     */
    void answerExpiredByFault(Object id) {
        onLoop(null, () -> {
            if (forwarded && responseHead == null) {
                frontend.closeUpstream(); // its late answer must not be taken for the next request's
            }
            answeredHere = true;
            requestId = id;
            answerExpired();
        });
    }

    private void answerExpired() {
        log.info("{} {}: session {} was expired by a fault: answered 404", head.method(), head.uri(), sessionId);
        respondWithError(HttpResponseStatus.NOT_FOUND, requestId, "mcp-chaos: session " + sessionId
                + " expired (injected)", true);
    }

    /**
     * Whether a message travelling in {@code direction} here is the only one its body carries: a
     * JSON answer (nothing can go beside it). A POST body's copy goes upstream on a connection of
     * its own, so requests are not.
     */
    boolean carriesOneMessage(Direction direction) {
        return direction == Direction.SERVER_TO_CLIENT && mode == Mode.JSON;
    }

    /**
     * A fault answers this exchange itself with a status of its choice; false (and the body
     * released) when the response has already begun.
     */
    boolean respondWith(int status, Map<String, String> headers, ByteBuf body) {
        // Read off the loop too, as overrideContentType does: a frame reaches the chain after
        // the head it follows was written.
        if (responded || done) {
            body.release();
            return false;
        }
        onLoop(null, () -> {
            if (responded || done) {
                body.release();
                return;
            }
            answeredHere = true;
            if (forwarded && responseHead == null) {
                frontend.closeUpstream(); // its late answer must not be taken for the next request's
            }
            FullHttpResponse response = new DefaultFullHttpResponse(head.protocolVersion(),
                    HttpResponseStatus.valueOf(status), body);
            headers.forEach((name, value) -> response.headers().set(name, value));
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            if (!response.headers().contains(HttpHeaderNames.CONTENT_TYPE) && body.isReadable()) {
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            }
            responded = true;
            downstream.writeAndFlush(response);
            complete();
        });
        return true;
    }

    private static boolean isMessage(Frame frame) {
        switch (frame.envelope().kind()) {
            case REQUEST:
            case NOTIFICATION:
            case RESPONSE:
            case ERROR:
            case BATCH:
                return true;
            default:
                return false;
        }
    }

    /**
     * A fault makes the response claim another content type; false when the response head has
     * already left (an SSE stream's) or none will.
     */
    boolean overrideContentType(String contentType) {
        // Read off the loop too: a frame reaches the chain after the head it follows was written,
        // so a head that left is seen; a head still to come waits for the frame the chain holds.
        if (responded || done) {
            return false;
        }
        onLoop(null, () -> contentTypeOverride = contentType);
        return true;
    }

    private void respondWithError(HttpResponseStatus status, Object id, String message, boolean keepAlive) {
        if (responded || done) {
            return;
        }
        responded = true;
        FullHttpResponse response = HttpMessages.jsonRpcError(downstream.alloc(), head.protocolVersion(), status, id,
                message);
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        downstream.writeAndFlush(response);
        done = true;
        frontend.stopResponseTimer(this);
        releaseHeld();
        frontend.exchangeDone(this, keepAlive && clientKeepAlive);
    }

    /** The upstream's response head made ready for the client, in place (it is not read again). */
    private HttpResponse copyHead(HttpResponse response) {
        HttpMessages.removeHopByHop(response.headers());
        if (contentTypeOverride != null) {
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentTypeOverride);
        }
        if (!clientKeepAlive || !upstreamKeepAlive) {
            // complete() closes the client's connection after this response: say so (RFC 9112 9.6).
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return response;
    }

    /**
     * Writes the response head and flushes it once this turn of the loop is over, so that the
     * head leaves in one write with what came with it from the upstream (the end of a 202 with no
     * body, the first events of a stream). Flushed at once, a bodiless answer that Node wrote in
     * one piece reached the client in two (127 of 300 202s), and a client that takes the head of
     * a 202 for the answer and cancels its body (the MCP TypeScript SDK over fetch) may find the
     * connection still busy with the rest.
     */
    private void writeHead(HttpResponse out) {
        responded = true;
        downstream.write(out);
        flushSoon();
    }

    private void complete() {
        if (done) {
            return;
        }
        done = true;
        frontend.stopResponseTimer(this);
        releaseHeld();
        boolean keepAlive = clientKeepAlive && upstreamKeepAlive;
        frontend.exchangeDone(this, keepAlive);
    }

    private void process(Frame frame) {
        try {
            chain.process(frame);
        } catch (RejectedExecutionException e) {
            frame.release();
        }
    }

    private void process(List<Frame> frames) {
        try {
            chain.process(frames);
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    /**
     * Runs {@code task} on this exchange's loop once the chain holds no frame of this exchange's
     * response: the end of the response travels behind its messages.
     */
    private void afterHeld(Runnable task) {
        chain.endRoute(this, Direction.SERVER_TO_CLIENT, () -> onLoop(null, task));
    }

    /** Runs on the client connection's event loop; releases {@code frame} if that loop is gone. */
    private void onLoop(Frame frame, Runnable task) {
        if (downstream.eventLoop().inEventLoop()) {
            task.run();
            return;
        }
        try {
            downstream.eventLoop().execute(task);
        } catch (RejectedExecutionException e) {
            if (frame != null) {
                frame.release();
            }
        }
    }

    /**
     * A frame the chain let through arrived after this exchange was over: it cannot be delivered.
     * Counted and logged, so that every message read is delivered, named by a fault event, or
     * named here.
     */
    private void discard(Frame frame, TransportObserver.DiscardReason reason) {
        try {
            Envelope envelope = frame.envelope();
            Object id = envelope.hasId() ? envelope.id() : null;
            String method = frame.method();
            log.info("{} {}: {} {} id={} {}: not delivered ({})", head.method(), head.uri(),
                    frame.direction().arrow(), envelope.kind().name().toLowerCase(java.util.Locale.ROOT), id,
                    method == null ? "" : method, reason == TransportObserver.DiscardReason.CLIENT_GONE
                            ? "the client went away" : "the response had already ended");
            config.observer.messageDiscarded(TransportKind.HTTP, chain.session().id(), frame.direction(),
                    envelope.kind(), id, method, reason);
        } finally {
            frame.release();
        }
    }

    private void releaseRequestBody() {
        if (requestBody != null) {
            requestBody.release();
            requestBody = null;
        }
    }

    @Override
    public String toString() {
        return "Exchange(" + head.method() + ' ' + head.uri() + (sessionId != null ? ", session " + sessionId : "") + ')';
    }
}
