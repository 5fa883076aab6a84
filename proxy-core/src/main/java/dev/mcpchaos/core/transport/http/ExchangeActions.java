package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;

/**
 * An {@link Exchange} as the chain and its faults reach it: the route of every frame that
 * travels on it ({@link Frame#route()}, typed as {@link ExchangeContext}). It delivers what the
 * chain let through, shows the request's headers to the observers, and does what fault actions
 * ask (close a side, answer in the upstream's place, change the content type, stall the end,
 * expire the session).
 *
 * <p>Its callers run on the chain's executor or a fault's timer, not on the exchange's loop. What
 * must be decided at once (will a fault's answer replace the response?) reads only what the loop
 * published ({@link Exchange#headLeft()}, {@link UpstreamResponse#oneMessageBody}, the headers);
 * everything that changes the exchange is posted to the client connection's event loop
 * ({@link Exchange#onLoop}, {@link #answerAfterThisTurn}).
 */
final class ExchangeActions implements ExchangeContext {

    private static final Logger log = LoggerFactory.getLogger(Exchange.class);

    private final Exchange exchange;
    private final ClientRequest request;
    private final UpstreamResponse response;

    /** A fault's answer, reserved on the loop and waiting for the chain's turn to end (see {@link #answerAfterThisTurn}). */
    private Runnable pendingAnswer;

    ExchangeActions(Exchange exchange) {
        this.exchange = exchange;
        this.request = exchange.request;
        this.response = exchange.response;
    }

    // ---- HeaderSource: what the observers read, from any thread ------------------------------------

    /** A request header as the client sent it, even one the proxy removed or replaced upstream. */
    @Override
    public String requestHeader(String name) {
        return request.header(name);
    }

    @Override
    public String requestMethod() {
        return request.head.method().name();
    }

    @Override
    public String requestUri() {
        return request.head.uri();
    }

    @Override
    public List<Map.Entry<String, String>> requestHeaders() {
        return request.headers();
    }

    @Override
    public int answeredStatus() {
        return exchange.writer.answeredStatus();
    }

    @Override
    public int responseStatus() {
        return response.status();
    }

    @Override
    public List<Map.Entry<String, String>> responseHeaders() {
        return response.headers();
    }

    // ---- the chain's sinks -------------------------------------------------------------------------------

    /** The chain let a client-to-server frame through: it goes upstream, unless the exchange is over. */
    @Override
    public void sendRequest(Frame frame) {
        exchange.onLoop(frame, () -> {
            if (exchange.isDone() || response.state().answeredHere) {
                discard(frame);
            } else {
                exchange.onRequestFrame(frame);
            }
        });
    }

    /** The chain let a server-to-client frame through (or a fault made one): to the client, unless the exchange is over. */
    @Override
    public void sendResponse(Frame frame) {
        exchange.onLoop(frame, () -> {
            if (exchange.isDone()) {
                discard(frame);
            } else {
                exchange.onResponseFrame(frame);
            }
        });
    }

    /**
     * A frame the chain let through arrived after this exchange was over: it cannot be delivered.
     * Counted and logged, so that every message read is delivered, named by a fault event, or
     * named here.
     */
    private void discard(Frame frame) {
        try {
            TransportObserver.DiscardReason reason = exchange.clientGone()
                    ? TransportObserver.DiscardReason.CLIENT_GONE : TransportObserver.DiscardReason.RESPONSE_ENDED;
            Envelope envelope = frame.envelope();
            Object id = envelope.hasId() ? envelope.id() : null;
            String method = frame.method();
            log.info("{} {}: {} {} id={} {}: not delivered ({})", request.head.method(), request.head.uri(),
                    frame.direction().arrow(), envelope.kind().name().toLowerCase(Locale.ROOT), id,
                    method == null ? "" : method, reason == TransportObserver.DiscardReason.CLIENT_GONE
                            ? "the client went away" : "the response had already ended");
            exchange.config.observer.messageDiscarded(TransportKind.HTTP, exchange.chain.session().id(),
                    frame.direction(), envelope.kind(), id, method, reason);
        } finally {
            frame.release();
        }
    }

    // ---- what fault actions do -------------------------------------------------------------------------

    /** A fault closes the client's connection of this exchange. */
    @Override
    public void closeClient() {
        exchange.onLoop(null, () -> {
            exchange.cutClient(); // what was let through before the fault's message still goes first
            exchange.frontend.closeClient();
        });
    }

    /**
     * A fault closes the upstream connection of this exchange: the client sees what a server that
     * went away looks like through a proxy, a 502 with a JSON-RPC error before the response began,
     * a cut stream after. Not an upstream failure: the fault event names it.
     */
    @Override
    public void closeUpstream() {
        exchange.onLoop(null, () -> {
            exchange.upstream.close();
            if (exchange.isDone() || response.state().answeredHere) {
                return;
            }
            if (response.body() != null && response.body().streamsMessages() && exchange.begun()) {
                // As if the server went away at this event: nothing after it reaches the client.
                exchange.cutClient();
                return;
            }
            if (response.state().received) {
                // The whole answer had come: it still goes if the chain lets it through; if the
                // fault dropped it, its end answers 502 (see JsonResponseBody#onRouteEnd).
                response.cutByFault();
                return;
            }
            if (!exchange.begun()) {
                response.answerHere();
                exchange.respondWithError(exchange.answers.upstreamCutByFault(true));
            } else {
                exchange.afterHeld(exchange::cutClient);
            }
        });
    }

    @Override
    public boolean expireSession(Frame at) {
        if (!exchange.session.expire()) {
            return false; // a sessionless request (or one of a session the upstream never named)
        }
        if (at.direction() == Direction.CLIENT_TO_SERVER && at.envelope().isRequest()) {
            // The request that met the fault is answered as every later one of the session is:
            // 404 with the JSON-RPC error, and never forwarded.
            Object id = at.envelope().id();
            answerAfterThisTurn(() -> {
                if (exchange.begun()) {
                    return; // the client went away meanwhile
                }
                exchange.takeOverFromUpstream();
                exchange.answerExpired(id);
            });
        }
        return true;
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
        if (exchange.headLeft()) {
            answer.release();
            return false;
        }
        answerAfterThisTurn(() -> {
            if (exchange.begun()) {
                answer.release();
                return;
            }
            exchange.takeOverFromUpstream();
            exchange.writer.writeWhole(exchange.answers.withStatus(status, headers, answer));
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
        if (exchange.headLeft()) {
            return false;
        }
        exchange.onLoop(null, () -> response.overrideContentType(contentType));
        return true;
    }

    /** A fault keeps this response from ending (see {@link ConnectionControl#stallResponse}). */
    @Override
    public void stall() {
        exchange.onLoop(null, exchange.writer::stall);
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
        if (exchange.inLoop()) {
            response.answerHere();
            pendingAnswer = answer;
            next = this::writePendingAnswer;
        }
        Runnable onClientLoop = next;
        try {
            exchange.chain.executor().execute(() -> exchange.onLoop(null, onClientLoop));
        } catch (RejectedExecutionException e) {
            exchange.onLoop(null, onClientLoop); // the chain's loop is shutting down: there is no later turn
        }
    }

    /** Whether a fault's answer is reserved and due on the next turn (on the loop): a timeout must not answer meanwhile. */
    boolean answerPending() {
        return pendingAnswer != null;
    }

    /** Writes a fault's answer that is due on the next turn now (the drain cannot wait for it). */
    void writePendingAnswer() {
        Runnable answer = pendingAnswer;
        pendingAnswer = null;
        if (answer != null) {
            answer.run();
        }
    }

    @Override
    public String toString() {
        return exchange.toString();
    }
}
