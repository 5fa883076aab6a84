package dev.mcpchaos.core.transport.http;

import java.util.Map;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.codec.sse.SseBoundary;
import dev.mcpchaos.core.codec.sse.SseEncoder;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.codec.sse.SseFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;
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
    /** The upstream's response has all arrived (its last content); what remains is passing the chain. */
    private boolean responseReceived;

    Exchange(FrontendHandler frontend, Channel downstream, HttpRequest head, HttpProxyConfig config,
             HttpSessions sessions) {
        this.frontend = frontend;
        this.downstream = downstream;
        this.head = head;
        this.config = config;
        this.post = HttpMethod.POST.equals(head.method());
        this.sessionId = head.headers().get(HttpMessages.MCP_SESSION_ID);
        this.clientKeepAlive = HttpUtil.isKeepAlive(head);
        this.chain = sessions.chainFor(sessionId, downstream.eventLoop());
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
    }

    /** The chain let a client-to-server frame through: send it upstream. On the chain's executor. */
    void sendRequest(Frame frame) {
        onLoop(frame, () -> {
            if (done || answeredHere) {
                frame.release();
                return;
            }
            if (forwarded) {
                // A second frame for one request (a duplicate): the client asked once, so its
                // answer can only be the first one. Send the copy on a connection of its own.
                frontend.sendShadow(shadowRequest(frame.content().retainedSlice()));
                frame.release();
                return;
            }
            forwarded = true;
            ByteBuf body = frame.content().retainedSlice();
            frame.release();
            frontend.sendUpstream(this, fullRequest(body));
            startResponseTimeout();
        });
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

    /** The upstream did not answer within the response timeout (see {@link FrontendHandler#startResponseTimer}). */
    void onResponseTimeout() {
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
        } else {
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
                    // After the stream's last events have passed the chain.
                    afterChain(this::endStream);
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
                if (last) {
                    ByteBuf body = responseBody;
                    responseBody = null;
                    Envelope envelope = SNIFFERS.get().sniff(body);
                    Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.SERVER_TO_CLIENT,
                            chain.session().nextSequence(Direction.SERVER_TO_CLIENT));
                    frame.route(this);
                    process(frame);
                }
                break;
            }
            default:
                downstream.writeAndFlush(content.retain());
                content.release();
                if (last) {
                    complete();
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
                sseWatch = newSseDecoder();
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
                frame.release();
                return;
            }
            switch (mode) {
                case SSE:
                    ByteBuf event = frame.isOriginal() ? frame.wire().retainedSlice()
                            : SseEncoder.encode(downstream.alloc(), frame.content());
                    frame.release();
                    queueSse(event);
                    break;
                case JSON: {
                    if (!frame.isOriginal() && !isMessage(frame)) {
                        // Stray bytes a fault put before the answer (noise): a JSON body has only
                        // one message, so they lead the body, as if the server had printed them.
                        if (bodyPrefix == null) {
                            bodyPrefix = downstream.alloc().compositeBuffer();
                        }
                        bodyPrefix.addComponent(true, frame.content().retainedSlice());
                        bodyPrefix.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'}));
                        frame.release();
                        break;
                    }
                    HttpResponse out = copyHead(responseHead);
                    ByteBuf body = frame.content().retainedSlice();
                    frame.release();
                    if (bodyPrefix != null) {
                        body = bodyPrefix.addComponent(true, body);
                        bodyPrefix = null;
                    }
                    FullHttpResponse full = new DefaultFullHttpResponse(out.protocolVersion(), out.status(), body,
                            out.headers(), EmptyHttpHeaders.INSTANCE);
                    full.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                    responded = true;
                    downstream.writeAndFlush(full);
                    complete();
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

    private void endStream() {
        onLoop(null, () -> {
            if (!done) {
                writeSseOut();
                downstream.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                complete();
            }
        });
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
                afterChain(() -> onLoop(null, this::cutClient));
            } else {
                cutClient();
            }
        }
    }

    private void cutClient() {
        if (!done) {
            done = true;
            releaseSse();
            downstream.close();
        }
    }

    /** The upstream could not be reached. */
    void onUpstreamUnreachable(Throwable cause) {
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
        onLoop(null, frontend::closeClient);
    }

    /** A fault closes the upstream connection of this exchange. */
    void closeUpstream() {
        onLoop(null, frontend::closeUpstream);
    }

    /** The client's connection closed: let go of everything. */
    void abort() {
        done = true;
        frontend.stopResponseTimer(this);
        releaseRequestBody();
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

    private void answerExpired() {
        log.info("{} {}: session {} was expired by a fault: answered 404", head.method(), head.uri(), sessionId);
        respondWithError(HttpResponseStatus.NOT_FOUND, requestId, "mcp-chaos: session " + sessionId
                + " expired (injected)", true);
    }

    /** A fault answers this exchange itself with a status of its choice. */
    void respondWith(int status, Map<String, String> headers, ByteBuf body) {
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

    private void writeHead(HttpResponse out) {
        responded = true;
        downstream.writeAndFlush(out);
    }

    private void complete() {
        if (done) {
            return;
        }
        done = true;
        frontend.stopResponseTimer(this);
        releaseSse();
        if (bodyPrefix != null) {
            bodyPrefix.release();
            bodyPrefix = null;
        }
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

    private void afterChain(Runnable task) {
        try {
            chain.executor().execute(task);
        } catch (RejectedExecutionException e) {
            downstream.close();
        }
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
