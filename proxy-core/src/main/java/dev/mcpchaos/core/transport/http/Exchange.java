package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;

/**
 * One HTTP request from the client and the response to it: the route of every frame that
 * travels on it ({@link Frame#route()}). A POST body is one client-to-server frame; the answer is
 * one server-to-client frame (a JSON body) or a stream of them (SSE events); a GET opens a stream.
 *
 * <p>The response moves through {@link Phase}s, forward only: {@code AWAITING} its head,
 * {@code GATHERING} a JSON body before anything goes to the client, {@code STREAMING} once the
 * head went, {@code DONE}. The upstream's side of the response is an {@link UpstreamResponse}: its
 * head and what it says, how much of it arrived, whether the proxy took the answer over, and the
 * {@link ResponseBody} strategy the head chose; the answers the proxy makes itself (its errors,
 * what faults inject) are made by {@link ProxyAnswers}. Both are driven from here and call
 * nothing back. The exchange keeps what is common to all: the phases, the request, the upstream
 * connection's fate, when it answers itself, faults that end it, and the end of the response,
 * which travels through the chain behind the response's messages ({@link InterceptorChain#endRoute}).
 *
 * <p>All state lives on the client connection's event loop. The chain's sinks, which run on the
 * chain's executor, hop here before touching it.
 */
final class Exchange implements ExchangeContext, ResponseOutput {

    private static final Logger log = LoggerFactory.getLogger(Exchange.class);

    /**
     * Why the exchange ended ({@link #finish}): what the front end is told. The response is
     * {@code DONE} from then on, whatever the reason.
     */
    enum Ending {
        /** Answered as the upstream (and the chain) said: the connection goes on if both sides keep it alive. */
        ANSWERED,
        /** Answered here with an error of the proxy's (a 4xx or 5xx with a JSON-RPC error). */
        ANSWERED_HERE,
        /** An SSE stream the drain ended between events: the connection closes after it. */
        DRAINED,
        /** Cut: the client's connection closes after what was written, without a proper end. */
        CUT,
        /** The client's connection closed first: nobody to answer or tell. */
        CLIENT_GONE
    }

    /** Where the response stands. It only moves forward ({@link #moveTo(Phase)}). */
    enum Phase {
        /** No final response head from the upstream yet; nothing written to the client. */
        AWAITING,
        /** The head came and a JSON body is being gathered (or is in the chain); nothing written yet. */
        GATHERING,
        /** The head went to the client; the body follows as the upstream and the chain let it. */
        STREAMING,
        /** Over (answered, answered here with an error, cut, or abandoned): what arrives now is discarded. */
        DONE
    }

    private final FrontendHandler frontend;
    /** The client connection's upstream side, which this exchange's request goes on. */
    private final UpstreamLink upstream;
    /** The client connection's response timer (see {@link ResponseTimer}). */
    private final ResponseTimer timer;
    private final Channel downstream;
    private final HttpRequest head;
    /** The request: its head as the client sent it, its body, the forms it goes upstream in. */
    private final ClientRequest request;
    private final boolean post;
    private final String sessionId;
    /** The session the exchange belongs to: its chain, and what the session table learns from the exchange. */
    private final ExchangeSession session;
    private final InterceptorChain chain;
    private final HttpProxyConfig config;

    /** Whether the client's connection stays open after this exchange, as its request said. */
    private final boolean clientKeepAlive;
    private Object requestId;

    // ---- the response
    /** The upstream's side of the response: its head, how much arrived, its body, whether the proxy took over. */
    private final UpstreamResponse response;
    /** The answers the proxy makes itself. */
    private final ProxyAnswers answers;
    private Phase phase = Phase.AWAITING;
    /**
     * Whether the response head went (or the exchange is over): {@code phase} past GATHERING,
     * published for the faults' decisions, which are taken on the chain's executor and must
     * answer at once ({@link #respondWith}, {@link #overrideContentType}). The only state read
     * off the loop besides {@link UpstreamResponse#oneMessageBody} and what
     * {@link dev.mcpchaos.core.frame.HeaderSource} shows.
     */
    private volatile boolean headLeft;
    /** The status of the head written to the client, 0 before; volatile: the referee reads it off the loop. */
    private volatile int answeredStatus;
    /** What a JSON answer being gathered holds of the proxy's {@link BufferBudget}, until the exchange ends. */
    private long responseReserved;
    /** A fault's answer, reserved and waiting for the chain's turn to end (see {@link #answerAfterThisTurn}). */
    private Runnable pendingAnswer;
    /** A flush of the client connection is queued on its event loop (see {@link #flushSoon}). */
    private boolean flushPending;
    /** A fault (blackhole) keeps this response from ending: the client waits until it gives up. */
    private boolean stalled;
    /** How the exchange ended; null while it has not (the response is DONE once it is not null). */
    private Ending ending;
    Exchange(FrontendHandler frontend, Channel downstream, HttpRequest head, HttpProxyConfig config,
             HttpSessions sessions) {
        this.frontend = frontend;
        this.upstream = frontend.upstream();
        this.timer = frontend.responseTimer();
        this.downstream = downstream;
        this.head = head;
        this.config = config;
        this.request = new ClientRequest(head, config, frontend.buffers(), downstream.alloc());
        this.post = request.post;
        this.sessionId = request.facts.sessionId;
        this.clientKeepAlive = request.facts.keepAlive(head);
        this.session = new ExchangeSession(sessions, head, sessionId, downstream);
        this.chain = session.chain;
        this.response = new UpstreamResponse(head.method(), clientKeepAlive, config.settings.maxJsonResponseBody());
        this.answers = new ProxyAnswers(downstream.alloc(), head, sessionId, config);
    }

    /** Where the response stands. */
    Phase phase() {
        return phase;
    }

    /** Moves the response forward; a move back is a bug in the exchange. */
    private void moveTo(Phase next) {
        assert inLoop() : this + ": " + phase + " -> " + next + " off its event loop";
        if (next.compareTo(phase) < 0) {
            throw new IllegalStateException(this + ": " + phase + " -> " + next);
        }
        phase = next;
        if (next.compareTo(Phase.STREAMING) >= 0) {
            headLeft = true;
        }
    }

    /** Moves the request forward; a move back is a bug in the exchange. */
    private void moveTo(ClientRequest.State next) {
        assert inLoop() : this + ": " + request.state() + " -> " + next + " off its event loop";
        request.moveTo(next);
    }

    /** Whether the caller runs on the client connection's event loop, where all of this exchange's state lives. */
    private boolean inLoop() {
        return downstream.eventLoop().inEventLoop();
    }

    /** Whether the client has had the start of a response (or the exchange is over). */
    private boolean begun() {
        return phase == Phase.STREAMING || phase == Phase.DONE;
    }

    /** A request header as the client sent it, even one the proxy removed or replaced upstream. */
    @Override
    public String requestHeader(String name) {
        return request.header(name);
    }

    @Override
    public String requestMethod() {
        return head.method().name();
    }

    @Override
    public String requestUri() {
        return head.uri();
    }

    @Override
    public List<Map.Entry<String, String>> requestHeaders() {
        return request.headers();
    }

    @Override
    public int answeredStatus() {
        return answeredStatus;
    }

    @Override
    public int responseStatus() {
        return response.status();
    }

    @Override
    public List<Map.Entry<String, String>> responseHeaders() {
        return response.headers();
    }

    boolean requestComplete() {
        return request.state().complete();
    }

    /**
     * Whether this exchange used the upstream connection and left it ready for another request:
     * its request went whole, its response came whole, and the upstream said keep-alive.
     */
    boolean leftUpstreamIdle() {
        return request.state() == ClientRequest.State.SENT && response.leftIdle();
    }

    boolean isDone() {
        return phase == Phase.DONE;
    }

    String sessionId() {
        return sessionId;
    }

    // ---- the request ---------------------------------------------------------------------------------

    /** The request's head arrived. */
    void onRequestHead() {
        assert inLoop();
        if (!post && session.expired()) {
            answerExpired();
            return;
        }
        if (post) {
            if (request.facts.length > config.settings.maxRequestBody()) {
                rejectBody(request.facts.length);
            }
        } else {
            // GET (the SSE stream), DELETE, OPTIONS...: nothing to intercept; forward the head now.
            moveTo(ClientRequest.State.RELAYING);
            upstream.send(this, request.headForUpstream());
            startResponseTimeout();
        }
    }

    /** A piece of the request body arrived; takes ownership. */
    void onRequestContent(HttpContent content) {
        assert inLoop();
        boolean last = content instanceof LastHttpContent;
        if (phase == Phase.DONE) {
            content.release();
        } else if (post) {
            switch (request.gather(content)) {
                case TOO_LARGE -> rejectBody(request.sizeSeen());
                case OVER_BUDGET -> rejectBuffered();
                case WHOLE -> {
                    moveTo(ClientRequest.State.RECEIVED);
                    onRequestBody();
                }
                case MORE -> { }
            }
        } else {
            upstream.send(this, content);
            if (last) {
                moveTo(ClientRequest.State.SENT);
            }
        }
    }

    private void rejectBody(long size) {
        ProxyAnswers.ErrorAnswer error = answers.bodyTooLarge(size);
        request.releaseBody();
        moveTo(ClientRequest.State.RECEIVED);
        respondWithError(error, null);
    }

    /** The bytes held for all clients are at their ceiling: a new body is refused (see {@link ProxyAnswers#overBudget}). */
    private void rejectBuffered() {
        ProxyAnswers.ErrorAnswer error = answers.overBudget(frontend.buffers());
        request.releaseBody();
        moveTo(ClientRequest.State.RECEIVED);
        respondWithError(error, null);
    }

    private void onRequestBody() {
        ByteBuf body = request.takeBody();
        if (session.expired()) {
            Envelope envelope = HttpMessages.sniffer().sniff(body);
            requestId = envelope.id();
            if (body.isReadable()) {
                // Never forwarded, but the observers (journal, referee) see what the client still
                // sends on a session it was told is gone: that is what the client checks judge.
                Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.CLIENT_TO_SERVER,
                        chain.session().nextSequence(Direction.CLIENT_TO_SERVER));
                frame.route(this);
                answerExpired(); // first: whoever looks at the frame finds it answered 404
                try {
                    chain.observe(frame);
                } catch (RejectedExecutionException e) {
                    frame.release();
                }
            } else {
                body.release();
                answerExpired();
            }
            return;
        }
        if (!body.isReadable()) {
            body.release();
            moveTo(ClientRequest.State.SENT);
            upstream.send(this, request.full(Unpooled.EMPTY_BUFFER));
            startResponseTimeout();
            return;
        }
        Envelope envelope = HttpMessages.sniffer().sniff(body);
        requestId = envelope.id();
        Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.CLIENT_TO_SERVER,
                chain.session().nextSequence(Direction.CLIENT_TO_SERVER));
        frame.route(this);
        process(frame);
        if (!request.state().forwarded() && phase != Phase.DONE) {
            // Only when the request did not go at once: its end travels behind what holds it.
            chain.endRoute(this, Direction.CLIENT_TO_SERVER, () -> onLoop(null, this::requestEnded));
        }
    }

    /** The chain let a client-to-server frame through: send it upstream. On the chain's executor. */
    @Override
    public void sendRequest(Frame frame) {
        onLoop(frame, () -> {
            if (phase == Phase.DONE || response.state().answeredHere) {
                discard(frame, ending == Ending.CLIENT_GONE ? TransportObserver.DiscardReason.CLIENT_GONE
                        : TransportObserver.DiscardReason.RESPONSE_ENDED);
                return;
            }
            if (!request.state().forwarded() && !frame.isOriginal() && !HttpMessages.isMessage(frame)) {
                // Bytes a fault made that are no message (noise before the request, or the request
                // corrupted): a POST body carries one message, so they lead it, or are the body
                // when no message follows (the route's end, see requestEnded).
                request.addPrefix(frame);
                return;
            }
            if (request.state().forwarded()) {
                // A second frame for one request (a duplicate): the client asked once, so its
                // answer can only be the first one. Send the copy on a connection of its own.
                upstream.sendShadow(request.shadow(frame.content().retainedSlice()));
                frame.release();
                return;
            }
            ByteBuf body = frame.content().retainedSlice();
            frame.release();
            forwardBody(request.withPrefix(body));
        });
    }

    private void forwardBody(ByteBuf body) {
        moveTo(ClientRequest.State.SENT);
        request.releaseReservation(); // the upstream connection's outbound buffer holds it from here
        upstream.send(this, request.full(body));
        startResponseTimeout();
    }

    /** The request's frame has left the chain (or was dropped): what a fault made of it that is no message goes alone. */
    private void requestEnded() {
        if (!request.state().forwarded() && phase != Phase.DONE && !response.state().answeredHere) {
            ByteBuf alone = request.takePrefix();
            if (alone != null) {
                forwardBody(alone);
            }
        }
    }

    private void startResponseTimeout() {
        if (config.settings.responseTimeoutMillis > 0) {
            timer.start(this, config.settings.responseTimeoutMillis);
        }
    }

    /**
     * A body that is not an SSE stream must keep coming: the deadline moves with every piece
     * (one timer per connection serves both deadlines, see {@link ResponseTimer}).
     */
    private void awaitMoreBody() {
        if (config.settings.responseBodyTimeoutMillis > 0) {
            timer.start(this, config.settings.responseBodyTimeoutMillis);
        }
    }

    /**
     * The upstream did not answer within the response timeout, or its body stopped coming for the
     * response body timeout (see {@link ResponseTimer}).
     */
    void onResponseTimeout() {
        assert inLoop();
        if (response.headCame() && !response.state().received && phase != Phase.DONE && response.body().keepsComing()) {
            ProxyAnswers.ErrorAnswer error = answers.bodyStopped(begun());
            upstream.close();
            response.answerHere();
            if (error != null) {
                respondWithError(error, requestId);
            } else {
                cutClient();
            }
            return;
        }
        if (!response.headCame() && phase != Phase.DONE && pendingAnswer == null) {
            ProxyAnswers.ErrorAnswer error = answers.upstreamSilent();
            upstream.close();
            respondWithError(error, requestId);
        }
    }

    // ---- the response ------------------------------------------------------------------------------------

    /** Something came from the upstream connection for this exchange; takes ownership. */
    void onUpstream(Object message) {
        assert inLoop();
        if (phase == Phase.DONE || response.state().answeredHere) {
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
            response.onContent((HttpContent) message, session);
        } else if (!(message instanceof HttpResponse)) {
            ReferenceCountUtil.release(message);
        }
    }

    private void onResponseHead(HttpResponse message) {
        UpstreamResponse.Kind kind = response.onHead(message);
        if (kind == UpstreamResponse.Kind.INFORMATIONAL) {
            return; // 100 Continue and friends: the final answer follows (their empty end is ignored)
        }
        timer.stop(this);
        session.onResponseHead(message, response.headSessionId());
        switch (kind) {
            case SSE -> {
                response.use(new SseResponseBody(this));
                writeHead(response.streamHead());
            }
            case JSON -> {
                moveTo(Phase.GATHERING);
                response.use(new JsonResponseBody(this, response.declaredLength()));
            }
            default -> {
                response.use(new RawResponseBody(this));
                if (kind == UpstreamResponse.Kind.RAW) {
                    awaitMoreBody();
                }
                writeHead(response.relayHead(kind == UpstreamResponse.Kind.RAW));
            }
        }
    }

    /** The chain let a server-to-client frame through (or a fault made one): send it to the client. */
    @Override
    public void sendResponse(Frame frame) {
        onLoop(frame, () -> {
            if (phase == Phase.DONE) {
                discard(frame, ending == Ending.CLIENT_GONE ? TransportObserver.DiscardReason.CLIENT_GONE
                        : TransportObserver.DiscardReason.RESPONSE_ENDED);
            } else if (response.body() == null) {
                answerFromFault(frame);
            } else {
                response.body().deliver(frame);
            }
        });
    }

    /**
     * A fault answered the request itself (an error) before any response head came: the
     * upstream never saw the request, or its late answer is thrown away with its connection.
     */
    private void answerFromFault(Frame frame) {
        response.answerHere();
        if (request.state().forwarded()) {
            upstream.close();
        }
        ByteBuf answer = frame.content().retainedSlice();
        frame.release();
        writeWhole(answers.fromFault(answer));
    }

    // ---- ResponseOutput: what the body strategies do to the exchange ------------------------------------

    @Override
    public ByteBufAllocator alloc() {
        return downstream.alloc();
    }

    @Override
    public InterceptorChain chain() {
        return chain;
    }

    @Override
    public HttpProxyConfig config() {
        return config;
    }

    @Override
    public String label() {
        return head.method() + " " + head.uri();
    }

    @Override
    public HttpResponse clientHead() {
        return response.clientHead();
    }

    /**
     * Writes the response head and flushes it once this turn of the loop is over, so that the
     * head leaves in one write with what came with it from the upstream (the end of a 202 with no
     * body, the first events of a stream). Flushed at once, a bodiless answer that Node wrote in
     * one piece reached the client in two (127 of 300 202s), and a client that takes the head of
     * a 202 for the answer and cancels its body (the MCP TypeScript SDK over fetch) may find the
     * connection still busy with the rest.
     */
    @Override
    public void writeHead(HttpResponse out) {
        moveTo(Phase.STREAMING);
        answeredStatus = out.status().code();
        downstream.write(out);
        flushSoon();
    }

    @Override
    public void writeContent(HttpContent content) {
        if (phase == Phase.DONE) {
            content.release();
        } else {
            downstream.write(content);
        }
    }

    /**
     * Flushes the client connection once the event loop is done with what it is doing now: the
     * events of one upstream read go out in one write instead of one system call each. An event
     * a fault delays is flushed in its own turn of the loop, so nothing waits for the next read.
     */
    @Override
    public void flushSoon() {
        if (flushPending) {
            return;
        }
        flushPending = true;
        try {
            downstream.eventLoop().execute(() -> {
                flushPending = false;
                flushNow();
            });
        } catch (RejectedExecutionException e) {
            flushPending = false;
            flushNow(); // shutting down: flush now rather than never
        }
    }

    private void flushNow() {
        if (response.body() != null && phase != Phase.DONE) {
            response.body().writeQueued();
        }
        downstream.flush();
    }

    @Override
    public void writeWhole(FullHttpResponse response) {
        moveTo(Phase.STREAMING);
        answeredStatus = response.status().code();
        downstream.writeAndFlush(response);
        complete();
    }

    @Override
    public void endBody(LastHttpContent last) {
        if (phase == Phase.DONE) {
            last.release();
            return;
        }
        response.body().writeQueued();
        if (stalled) {
            // What came went out; the end does not, so the client waits as on a silent server.
            last.release();
            downstream.flush();
            log.debug("{} {}: the end of the response is held back by a fault", head.method(), head.uri());
            return;
        }
        downstream.writeAndFlush(last);
        complete();
    }

    @Override
    public void bodyProgress(boolean allCame) {
        if (allCame) {
            timer.stop(this);
        } else {
            awaitMoreBody();
        }
    }

    @Override
    public void process(List<Frame> frames) {
        for (Frame frame : frames) {
            frame.route(this);
        }
        try {
            if (frames.size() == 1) {
                chain.process(frames.get(0));
            } else {
                chain.process(frames);
            }
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    @Override
    public void observe(List<Frame> frames) {
        for (Frame frame : frames) {
            frame.route(this);
        }
        try {
            chain.observe(frames);
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    @Override
    public void observeLent(Frame frame) {
        frame.route(this);
        chain.observe(frame);
    }

    @Override
    public void endAfterHeld() {
        afterHeld(() -> {
            if (phase != Phase.DONE) {
                response.body().onRouteEnd();
            }
        });
    }

    @Override
    public boolean reserve(long bytes) {
        BufferBudget buffers = frontend.buffers();
        if (buffers.tryReserve(bytes)) {
            responseReserved += bytes;
            return true;
        }
        config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.BUFFERED,
                Direction.SERVER_TO_CLIENT, buffers.held());
        return false;
    }

    @Override
    public boolean upstreamCutByFault() {
        return response.state().cutByFault;
    }

    @Override
    public void answerUpstreamCut() {
        response.answerHere();
        respondWithError(answers.upstreamCutByFault(false), requestId);
    }

    // ---- how the exchange ends otherwise: faults, failures, the client --------------------------------

    /** A fault keeps this response from ending (see {@link ConnectionControl#stallResponse}). */
    @Override
    public void stall() {
        onLoop(null, () -> stalled = true);
    }

    /** The upstream connection closed while this exchange was waiting on it. */
    void onUpstreamClosed() {
        assert inLoop();
        if (phase == Phase.DONE || response.state().answeredHere || !request.state().forwarded()
                || response.state().received) {
            // A response that had all arrived (one delimited by the connection's end, or followed
            // by the close its Connection: close announced) is still on its way through the chain.
            return;
        }
        ProxyAnswers.ErrorAnswer error = answers.upstreamClosed(begun());
        if (error != null) {
            respondWithError(error, requestId);
        } else {
            // Mid-response: the client must see the stream end abruptly, as it did upstream, but
            // only after the SSE events that had all arrived before the close have passed the chain.
            cutAfterHeld();
        }
    }

    /** Cuts the client after the events that came whole have passed the chain (an SSE body), or now. */
    private void cutAfterHeld() {
        if (response.body() != null && response.body().streamsMessages()) {
            afterHeld(this::cutClient);
        } else {
            cutClient();
        }
    }

    /** Closes the client's connection without a proper end, after what was queued for it. */
    private void cutClient() {
        if (phase != Phase.DONE) {
            if (response.body() != null) {
                response.body().writeQueued(); // what arrived before the break still goes out
            }
            finish(Ending.CUT, false);
        }
    }

    /**
     * What the upstream sent is not valid HTTP (Netty's decoder said so): never passed on as if
     * it were. Before the response began the client gets a 502 with a JSON-RPC error; after, its
     * connection is cut (a clean end would present a broken body as complete).
     */
    void onInvalidResponse(Throwable cause) {
        assert inLoop();
        if (phase == Phase.DONE) {
            return;
        }
        ProxyAnswers.ErrorAnswer error = answers.invalid(cause, begun());
        upstream.close(); // a decoder that failed reads nothing more of this connection
        response.answerHere();
        if (error != null) {
            respondWithError(error, requestId);
        } else {
            cutAfterHeld(); // the events that came whole first
        }
    }

    /** The upstream could not be reached, or failed other than on its socket. */
    void onUpstreamUnreachable(Throwable cause) {
        assert inLoop();
        // A decoder's failure is a response that is not HTTP; TLS failures come wrapped the same
        // way but mean the upstream could not be reached safely.
        if (cause instanceof io.netty.handler.codec.DecoderException
                && !(cause.getCause() instanceof javax.net.ssl.SSLException)) {
            onInvalidResponse(cause.getCause() != null ? cause.getCause() : cause);
            return;
        }
        if (begun()) {
            return;
        }
        respondWithError(answers.unreachable(cause), requestId);
    }

    /** A fault closes the client's connection of this exchange. */
    @Override
    public void closeClient() {
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
    @Override
    public void closeUpstream() {
        onLoop(null, () -> {
            upstream.close();
            if (phase == Phase.DONE || response.state().answeredHere) {
                return;
            }
            if (response.body() != null && response.body().streamsMessages() && begun()) {
                // As if the server went away at this event: nothing after it reaches the client.
                cutClient();
                return;
            }
            if (response.state().received) {
                // The whole answer had come: it still goes if the chain lets it through; if the
                // fault dropped it, its end answers 502 (see JsonResponseBody#onRouteEnd).
                response.cutByFault();
                return;
            }
            if (!begun()) {
                response.answerHere();
                respondWithError(answers.upstreamCutByFault(true), requestId);
            } else {
                afterHeld(this::cutClient);
            }
        });
    }

    /**
     * The drain's deadline passed with this exchange in flight (on the client's loop): an SSE
     * stream that stands between events gets {@link HttpProxy#DRAIN_SSE_COMMENT} and the end of
     * its chunked body; a request not yet answered gets a 503; anything else is cut.
     */
    HttpProxy.DrainOutcome endForDrain() {
        assert inLoop();
        if (phase == Phase.DONE) {
            return HttpProxy.DrainOutcome.CUT;
        }
        if (pendingAnswer != null) {
            writePendingAnswer(); // a fault's answer, due on the next turn: it goes now, as its own end
            return phase == Phase.DONE ? HttpProxy.DrainOutcome.FINISHED : HttpProxy.DrainOutcome.CUT;
        }
        response.answerHere(); // what the upstream still sends is not for the client any more
        upstream.close();
        if (!begun()) {
            respondWithError(answers.drained(), requestId);
            return HttpProxy.DrainOutcome.ANSWERED;
        }
        ResponseBody body = response.body();
        HttpContent drainEnd = body != null ? body.drainEnd() : null;
        if (drainEnd != null) {
            body.writeQueued();
            downstream.write(drainEnd);
            downstream.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            finish(Ending.DRAINED, false);
            return HttpProxy.DrainOutcome.ENDED;
        }
        log.info("{} {}: cut when the drain timeout ran out ({})", head.method(), head.uri(),
                body != null ? body.cutWhere() : "mid-body");
        cutClient();
        return HttpProxy.DrainOutcome.CUT;
    }

    /** The client's connection closed: let go of everything. */
    void abort() {
        assert inLoop();
        if (phase == Phase.DONE) {
            ending = Ending.CLIENT_GONE; // what still comes for it is discarded as the client's loss
            return;
        }
        finish(Ending.CLIENT_GONE, false);
    }

    /**
     * The one way into {@code DONE}: stops the response timer, lets go of everything held, and
     * tells the front end as {@code why} says (serve the next request or close after this answer,
     * cut the connection after what was written, or nothing when the client has gone). Once.
     *
     * @param keepAlive for an answer, whether the connection may serve another request
     */
    private void finish(Ending why, boolean keepAlive) {
        assert inLoop() : this + " finished off its event loop";
        if (phase == Phase.DONE) {
            return;
        }
        moveTo(Phase.DONE);
        ending = why;
        timer.stop(this);
        releaseHeld();
        switch (why) {
            case ANSWERED, ANSWERED_HERE, DRAINED -> frontend.exchangeDone(this, keepAlive);
            case CUT -> frontend.closeAfterWrites();
            case CLIENT_GONE -> { }
        }
    }

    /**
     * Lets go of every buffer this exchange holds: the request body and what a fault put before
     * it, the legacy probe, and the body's (a JSON body being gathered, SSE framing state, bytes
     * waiting for a flush, a prefix). Every way out of an exchange (answered, answered with an
     * error, cut, abandoned by its client) comes here.
     */
    private void releaseHeld() {
        request.release();
        session.release();
        response.release();
        frontend.buffers().release(responseReserved);
        responseReserved = 0;
    }

    @Override
    public boolean expireSession(Frame at) {
        if (!session.expire()) {
            return false; // a sessionless request (or one of a session the upstream never named)
        }
        if (at.direction() == Direction.CLIENT_TO_SERVER && at.envelope().isRequest()) {
            // The request that met the fault is answered as every later one of the session is.
            answerExpiredByFault(at.envelope().id());
        }
        return true;
    }

    /**
     * A fault expired this exchange's session at its request: answered like every later request
     * of the session, 404 with the JSON-RPC error, and never forwarded.
     */
    void answerExpiredByFault(Object id) {
        answerAfterThisTurn(() -> {
            if (begun()) {
                return; // the client went away meanwhile
            }
            if (request.state().forwarded() && !response.headCame()) {
                upstream.close(); // its late answer must not be taken for the next request's
            }
            response.answerHere();
            requestId = id;
            answerExpired();
        });
    }

    private void answerExpired() {
        respondWithError(answers.sessionExpired(), requestId);
    }

    /**
     * Whether a message travelling in {@code direction} here is the only one its body carries: a
     * JSON answer (nothing can go beside it). A POST body's copy goes upstream on a connection of
     * its own, so requests are not.
     */
    @Override
    public boolean carriesOneMessage(Direction direction) {
        return direction == Direction.SERVER_TO_CLIENT && response.oneMessageBody();
    }

    /**
     * A fault answers this exchange itself with a status of its choice; false (and the body
     * released) when the response has already begun.
     */
    @Override
    public boolean respondWith(int status, Map<String, String> headers, ByteBuf answer) {
        // Decided at once, on the chain's executor: a frame reaches the chain after the head it
        // follows was written, so a head that left is seen; the answer itself is written on the loop.
        if (headLeft) {
            answer.release();
            return false;
        }
        answerAfterThisTurn(() -> {
            if (begun()) {
                answer.release();
                return;
            }
            response.answerHere();
            if (request.state().forwarded() && !response.headCame()) {
                upstream.close(); // its late answer must not be taken for the next request's
            }
            writeWhole(answers.withStatus(status, headers, answer));
        });
        return true;
    }

    /**
     * A fault makes the response claim another content type; false when the response head has
     * already left (an SSE stream's) or none will.
     */
    @Override
    public boolean overrideContentType(String contentType) {
        // Decided at once, as respondWith is: a head still to come waits for the frame the chain holds.
        if (headLeft) {
            return false;
        }
        onLoop(null, () -> response.overrideContentType(contentType));
        return true;
    }

    /** Answers with an error of the proxy's, unless the response began; the exchange is over. */
    private void respondWithError(ProxyAnswers.ErrorAnswer error, Object id) {
        if (begun()) {
            return;
        }
        answeredStatus = error.status().code();
        downstream.writeAndFlush(answers.response(error, id));
        finish(Ending.ANSWERED_HERE, error.keepAlive() && clientKeepAlive);
    }

    private void complete() {
        finish(Ending.ANSWERED, clientKeepAlive && response.keepAlive());
    }

    private void process(Frame frame) {
        try {
            chain.process(frame);
        } catch (RejectedExecutionException e) {
            frame.release();
        }
    }

    /**
     * Runs {@code task} on this exchange's loop once the chain holds no frame of this exchange's
     * response: the end of the response travels behind its messages.
     */
    private void afterHeld(Runnable task) {
        chain.endRoute(this, Direction.SERVER_TO_CLIENT, () -> onLoop(null, task));
    }

    /**
     * Runs a fault's answer on the client connection's loop once the chain's current turn is
     * over. The fault's event is published when the fault's action returns, on the chain's loop:
     * written at once, the answer could reach the client (and a test read the journal) before the
     * event is in it. On the client's loop the answer is reserved at once ({@link UpstreamResponse#answerHere}),
     * so that nothing else (a late upstream answer, a timeout, the drain) answers meanwhile.
     */
    private void answerAfterThisTurn(Runnable answer) {
        Runnable next = answer;
        if (downstream.eventLoop().inEventLoop()) {
            response.answerHere();
            pendingAnswer = answer;
            next = this::writePendingAnswer;
        }
        Runnable onClientLoop = next;
        try {
            chain.executor().execute(() -> onLoop(null, onClientLoop));
        } catch (RejectedExecutionException e) {
            onLoop(null, onClientLoop); // the chain's loop is shutting down: there is no later turn
        }
    }

    private void writePendingAnswer() {
        Runnable answer = pendingAnswer;
        pendingAnswer = null;
        if (answer != null) {
            answer.run();
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
                    frame.direction().arrow(), envelope.kind().name().toLowerCase(Locale.ROOT), id,
                    method == null ? "" : method, reason == TransportObserver.DiscardReason.CLIENT_GONE
                            ? "the client went away" : "the response had already ended");
            config.observer.messageDiscarded(TransportKind.HTTP, chain.session().id(), frame.direction(),
                    envelope.kind(), id, method, reason);
        } finally {
            frame.release();
        }
    }

    @Override
    public String toString() {
        return "Exchange(" + head.method() + ' ' + head.uri() + (sessionId != null ? ", session " + sessionId : "") + ')';
    }
}
