package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.RejectedExecutionException;

/**
 * One HTTP request from the client and the response to it. A POST body is one client-to-server
 * frame; the answer is one server-to-client frame (a JSON body) or a stream of them (SSE events);
 * a GET opens a stream.
 *
 * <p>The response moves through {@link Phase}s, forward only: {@code AWAITING} its head,
 * {@code GATHERING} a JSON body before anything goes to the client, {@code STREAMING} once the
 * head went, {@code DONE}. The upstream's side of the response is an {@link UpstreamResponse}: its
 * head and what it says, how much of it arrived, whether the proxy took the answer over, and the
 * {@link ResponseBody} strategy the head chose; the answers the proxy makes itself (its errors,
 * what faults inject) are made by {@link ProxyAnswers}. Both are driven from here and call
 * nothing back. The exchange keeps what is common to all: the phases and the one way to end, the
 * request, what comes from the upstream, the upstream connection's fate, when it answers itself,
 * and the end of the response, which travels through the chain behind the response's messages
 * ({@link InterceptorChain#endRoute}). Two parts of it face outwards: its {@link ResponseWriter}
 * writes to the client (what the body strategies do, as {@link ResponseOutput}), and its
 * {@link ExchangeActions} is the route of every frame that travels on it ({@link Frame#route()}),
 * what the chain's sinks and the faults reach ({@link ExchangeContext}).
 *
 * <p>All state lives on the client connection's event loop. The chain's sinks and the faults,
 * which run on the chain's executor, hop here ({@link #onLoop}) before touching it.
 */
final class Exchange {

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

    // The parts, read by the writer and the actions (same package, all final).
    final FrontendHandler frontend;
    /** The client connection's upstream side, which this exchange's request goes on. */
    final UpstreamLink upstream;
    /** The client connection's response timer (see {@link ResponseTimer}). */
    private final ResponseTimer timer;
    private final Channel downstream;
    final HttpRequest head;
    /** The request: its head as the client sent it, its body, the forms it goes upstream in. */
    final ClientRequest request;
    private final boolean post;
    private final String sessionId;
    /** The session the exchange belongs to: its chain, and what the session table learns from the exchange. */
    final ExchangeSession session;
    final InterceptorChain chain;
    final HttpProxyConfig config;

    /** Whether the client's connection stays open after this exchange, as its request said. */
    private final boolean clientKeepAlive;
    private Object requestId;

    // ---- the response
    /** The upstream's side of the response: its head, how much arrived, its body, whether the proxy took over. */
    final UpstreamResponse response;
    /** The answers the proxy makes itself. */
    final ProxyAnswers answers;
    /** Writes the response to the client: what the body strategies do ({@link ResponseOutput}), and the answers made here. */
    final ResponseWriter writer;
    /** The route of this exchange's frames: what the chain's sinks and the faults reach of it. */
    final ExchangeActions route;
    private Phase phase = Phase.AWAITING;
    /**
     * Whether the response head went (or the exchange is over): {@code phase} past GATHERING,
     * published for the faults' decisions, which are taken on the chain's executor and must
     * answer at once ({@link ExchangeActions#respondWith}, {@link ExchangeActions#overrideContentType}).
     * The only state read off the loop besides {@link UpstreamResponse#oneMessageBody},
     * {@link ResponseWriter#answeredStatus} and what {@link dev.mcpchaos.core.frame.HeaderSource} shows.
     */
    private volatile boolean headLeft;
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
        this.writer = new ResponseWriter(this, downstream, frontend.buffers(), timer);
        this.route = new ExchangeActions(this);
    }

    /** Where the response stands. */
    Phase phase() {
        return phase;
    }

    /** Moves the response forward; a move back is a bug in the exchange. */
    void moveTo(Phase next) {
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
    boolean inLoop() {
        return downstream.eventLoop().inEventLoop();
    }

    /** Whether the client has had the start of a response (or the exchange is over). */
    boolean begun() {
        return phase == Phase.STREAMING || phase == Phase.DONE;
    }

    /** Whether the response head went (or the exchange is over); from any thread (see {@link #headLeft}). */
    boolean headLeft() {
        return headLeft;
    }

    /** Whether the exchange ended because its client went away: what comes for it now is the client's loss. */
    boolean clientGone() {
        return ending == Ending.CLIENT_GONE;
    }

    /** What log lines call the exchange ({@code POST /mcp}). */
    String label() {
        return head.method() + " " + head.uri();
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
        respondWithError(error); // no id: the body was not read
    }

    /** The bytes held for all clients are at their ceiling: a new body is refused (see {@link ProxyAnswers#overBudget}). */
    private void rejectBuffered() {
        ProxyAnswers.ErrorAnswer error = answers.overBudget(frontend.buffers());
        request.releaseBody();
        moveTo(ClientRequest.State.RECEIVED);
        respondWithError(error); // no id: the body was not read
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
                frame.route(route);
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
        frame.route(route);
        process(frame);
        if (!request.state().forwarded() && phase != Phase.DONE) {
            // Only when the request did not go at once: its end travels behind what holds it.
            chain.endRoute(route, Direction.CLIENT_TO_SERVER, () -> onLoop(null, this::requestEnded));
        }
    }

    /**
     * The chain let a client-to-server frame through, and the exchange still takes it (see
     * {@link ExchangeActions#sendRequest}): it goes upstream. Takes the frame.
     */
    void onRequestFrame(Frame frame) {
        assert inLoop();
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
    void awaitMoreBody() {
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
                respondWithError(error);
            } else {
                cutClient();
            }
            return;
        }
        if (!response.headCame() && phase != Phase.DONE && !route.answerPending()) {
            ProxyAnswers.ErrorAnswer error = answers.upstreamSilent();
            upstream.close();
            respondWithError(error);
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
                response.use(new SseResponseBody(writer));
                writer.writeHead(response.streamHead());
            }
            case JSON -> {
                moveTo(Phase.GATHERING);
                response.use(new JsonResponseBody(writer, response.declaredLength()));
            }
            default -> {
                response.use(new RawResponseBody(writer));
                if (kind == UpstreamResponse.Kind.RAW) {
                    awaitMoreBody();
                }
                writer.writeHead(response.relayHead(kind == UpstreamResponse.Kind.RAW));
            }
        }
    }

    /**
     * The chain let a server-to-client frame through (or a fault made one) before the exchange
     * ended (see {@link ExchangeActions#sendResponse}): its body sends it to the client. Takes the frame.
     */
    void onResponseFrame(Frame frame) {
        assert inLoop();
        if (response.body() == null) {
            answerFromFault(frame);
        } else {
            response.body().deliver(frame);
        }
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
        writer.writeWhole(answers.fromFault(answer));
    }

    /** A fault answers in the upstream's place: a late answer to a request that went must not be taken for the next one's. */
    void takeOverFromUpstream() {
        response.answerHere();
        if (request.state().forwarded() && !response.headCame()) {
            upstream.close();
        }
    }

    /** The upstream went away (injected) after the whole answer came and a fault dropped it: 502 (see {@link ResponseOutput#answerUpstreamCut}). */
    void answerUpstreamCut() {
        response.answerHere();
        respondWithError(answers.upstreamCutByFault(false));
    }

    /** The session is expired: the request is answered 404 with the JSON-RPC error carrying {@code id}, and never forwarded. */
    void answerExpired(Object id) {
        requestId = id;
        answerExpired();
    }

    private void answerExpired() {
        respondWithError(answers.sessionExpired());
    }

    // ---- how the exchange ends otherwise: faults, failures, the client --------------------------------

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
            respondWithError(error);
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
    void cutClient() {
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
            respondWithError(error);
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
        respondWithError(answers.unreachable(cause));
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
        if (route.answerPending()) {
            route.writePendingAnswer(); // a fault's answer, due on the next turn: it goes now, as its own end
            return phase == Phase.DONE ? HttpProxy.DrainOutcome.FINISHED : HttpProxy.DrainOutcome.CUT;
        }
        response.answerHere(); // what the upstream still sends is not for the client any more
        upstream.close();
        if (!begun()) {
            respondWithError(answers.drained());
            return HttpProxy.DrainOutcome.ANSWERED;
        }
        ResponseBody body = response.body();
        HttpContent drainEnd = body != null ? body.drainEnd() : null;
        if (drainEnd != null) {
            writer.writeDrainEnd(body, drainEnd);
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
        if (post && requestId != null) {
            // Its client left before the answer: in 2026-07-28, how a client cancels a request.
            config.observer.exchangeAbandoned(TransportKind.HTTP, chain.session().id(), requestId);
        }
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
        writer.releaseReserved();
    }

    /**
     * Answers with an error of the proxy's, carrying the request's id once it is known, unless
     * the response began; the exchange is over.
     */
    void respondWithError(ProxyAnswers.ErrorAnswer error) {
        if (begun()) {
            return;
        }
        writer.writeAnswer(answers.response(error, requestId));
        finish(Ending.ANSWERED_HERE, error.keepAlive() && clientKeepAlive);
    }

    /** The response ended as the upstream and the chain said. */
    void complete() {
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
    void afterHeld(Runnable task) {
        chain.endRoute(route, Direction.SERVER_TO_CLIENT, () -> onLoop(null, task));
    }

    /**
     * Runs {@code task} on the client connection's event loop, at once when called there: how
     * every call from another thread reaches the exchange. Releases {@code frame} if that loop is gone.
     */
    void onLoop(Frame frame, Runnable task) {
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

    @Override
    public String toString() {
        return "Exchange(" + head.method() + ' ' + head.uri() + (sessionId != null ? ", session " + sessionId : "") + ')';
    }
}
