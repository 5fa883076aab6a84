package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;

import java.util.List;
import java.util.Map;

/**
 * The upstream's side of an {@link Exchange}: the response head and what it says (its facts,
 * keep-alive, the session it names), how much of the response has arrived, the body strategy the
 * head chose, and whether the proxy took the answer over ({@link State}).
 *
 * <p>The exchange drives it, on the client connection's event loop; it calls nothing back. What
 * the exchange must do about a head is returned ({@link Kind}); the body strategy it holds
 * reaches the exchange only through {@link ResponseOutput}, as before.
 */
final class UpstreamResponse {

    /**
     * Where the upstream's response stands for its exchange. It only moves forward: each value
     * is a combination of three marks that are set, never cleared: all of the response arrived,
     * a fault then closed the upstream connection, the proxy answers (or ends) the exchange itself.
     * Every combination here is reachable and read.
     */
    enum State {
        /** Nothing yet, or the head and part of the body: more is to come. */
        COMING(false, false, false),
        /** All of it arrived (its last content); what remains is passing the chain. */
        RECEIVED(true, false, false),
        /**
         * All of it arrived, then a fault closed the upstream connection: the answer still goes if
         * the chain lets it through; if the fault dropped it, its end answers 502
         * (see {@link JsonResponseBody#onRouteEnd}).
         */
        CUT_BY_FAULT(true, true, false),
        /**
         * The proxy answers (or ends) the exchange itself before all of the response arrived:
         * whatever else the upstream sends for it is thrown away, and its connection is not reused.
         */
        ANSWERED_HERE(false, false, true),
        /** As {@code ANSWERED_HERE}, taken over after all of the response had arrived. */
        ANSWERED_HERE_RECEIVED(true, false, true),
        /** As {@code ANSWERED_HERE}, taken over after a fault closed the upstream behind a whole answer. */
        ANSWERED_HERE_CUT(true, true, true);

        /** All of the upstream's response arrived (its last content). */
        final boolean received;
        /** A fault closed the upstream connection after the whole answer had come. */
        final boolean cutByFault;
        /** The proxy answers (or ends) the exchange itself; what the upstream still sends is thrown away. */
        final boolean answeredHere;

        State(boolean received, boolean cutByFault, boolean answeredHere) {
            this.received = received;
            this.cutByFault = cutByFault;
            this.answeredHere = answeredHere;
        }

        private static State of(boolean received, boolean cutByFault, boolean answeredHere) {
            for (State state : values()) {
                if (state.received == received && state.cutByFault == cutByFault
                        && state.answeredHere == answeredHere) {
                    return state;
                }
            }
            throw new IllegalStateException("cut by a fault before the response all came");
        }
    }

    /** What a head from the upstream asks of the exchange ({@link #onHead}). */
    enum Kind {
        /** 100 Continue and friends: the final answer follows (their empty end is ignored). */
        INFORMATIONAL,
        /** An SSE stream: its head goes to the client at once, chunked ({@link #streamHead}). */
        SSE,
        /** A JSON answer within the limit: gathered before anything goes to the client. */
        JSON,
        /** Anything else with a body: relayed as it comes, its head at once ({@link #relayHead}). */
        RAW,
        /** No body (HEAD, 204, 304): the head goes at once ({@link #relayHead}). */
        EMPTY
    }

    private final HttpMethod method;
    /** Whether the client's connection stays open after this exchange, as its request said. */
    private final boolean clientKeepAlive;
    private final long maxJsonBody;

    private State state = State.COMING;
    /** The final head; volatile: the recorder reads it ({@link #status}) on the chain's executor. */
    private volatile HttpResponse head;
    /** The response head as it came, read once; null once its hop-by-hop headers are gone (see {@link #clientHead}). */
    private HeadFacts facts;
    /** The session the head names, kept past {@link #clientHead}. */
    private String headSessionId;
    /** The head's Content-Length, -1 when it sent none. */
    private long declaredLength = -1;
    /** Whether the head said how long its body is. */
    private boolean lengthGiven;
    /** Whether the upstream's connection stays open after its response, as the response said. */
    private boolean keepAlive = true;
    /** Handles the body once the head came; null before. */
    private ResponseBody body;
    /** Whether the body carries one message ({@link ResponseBody#carriesOneMessage}), published for the faults. */
    private volatile boolean oneMessageBody;
    private String contentTypeOverride;

    /**
     * @param method          the request's method (the answer to a HEAD has no body)
     * @param clientKeepAlive whether the client's connection stays open after the exchange
     * @param maxJsonBody     the largest JSON answer gathered ({@code --max-json-response-body})
     */
    UpstreamResponse(HttpMethod method, boolean clientKeepAlive, long maxJsonBody) {
        this.method = method;
        this.clientKeepAlive = clientKeepAlive;
        this.maxJsonBody = maxJsonBody;
    }

    State state() {
        return state;
    }

    /** The proxy answers (or ends) the exchange itself from now on: what the upstream still sends is thrown away. */
    void answerHere() {
        state = State.of(state.received, state.cutByFault, true);
    }

    /** A fault closed the upstream connection after the whole answer came. */
    void cutByFault() {
        state = State.of(state.received, true, state.answeredHere);
    }

    /** A response head arrived: read once, kept; says what the exchange must do with it. */
    Kind onHead(HttpResponse response) {
        if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
            return Kind.INFORMATIONAL;
        }
        head = response;
        HeadFacts read = HeadFacts.of(response.headers());
        facts = read;
        headSessionId = read.sessionId;
        declaredLength = read.length;
        lengthGiven = read.lengthGiven;
        keepAlive = read.keepAlive(response);
        int code = response.status().code();
        boolean hasBody = !HttpMethod.HEAD.equals(method) && code != 204 && code != 304;
        if (hasBody && code == 200 && HttpMessages.isEventStream(read.contentType)) {
            return Kind.SSE;
        } else if (hasBody && HttpMessages.isJson(read.contentType) && declaredLength <= maxJsonBody) {
            return Kind.JSON;
        }
        return hasBody ? Kind.RAW : Kind.EMPTY;
    }

    /** The body strategy the head chose (or the one the last took over with). */
    void use(ResponseBody next) {
        body = next;
        oneMessageBody = next.carriesOneMessage();
    }

    /**
     * A piece of the body arrived (takes ownership): handed to the body strategy, which may hand
     * over to another (a JSON answer over the limit goes raw).
     */
    void onContent(HttpContent content, ExchangeSession session) {
        if (body == null) {
            // The end of an informational response (100 Continue): the final one is still to come.
            content.release();
            return;
        }
        if (content instanceof LastHttpContent) {
            state = State.of(true, state.cutByFault, state.answeredHere);
        }
        session.onResponseBytes(content.content());
        ResponseBody next = body.onContent(content);
        if (next != body) {
            use(next);
        }
    }

    /** The head of an SSE stream made ready for the client: chunked, whatever length it claimed. */
    HttpResponse streamHead() {
        HttpResponse out = clientHead();
        out.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
        HttpUtil.setTransferEncodingChunked(out, true);
        return out;
    }

    /** The head of a body relayed as it comes, made ready for the client: chunked for a body of no stated length. */
    HttpResponse relayHead(boolean hasBody) {
        HttpResponse out = clientHead();
        if (hasBody && !lengthGiven) {
            HttpUtil.setTransferEncodingChunked(out, true);
        }
        return out;
    }

    /** The upstream's response head made ready for the client, in place (it is not read again). */
    HttpResponse clientHead() {
        HttpResponse response = head;
        HeadFacts read = facts;
        facts = null; // what it found is gone with this call; a second one scans again
        HttpMessages.removeHopByHop(response.headers(), null, false,
                read != null ? read.hopByHop : HeadFacts.of(response.headers()).hopByHop);
        if (contentTypeOverride != null) {
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentTypeOverride);
        }
        if (!clientKeepAlive || !keepAlive) {
            // The exchange closes the client's connection after this response: say so (RFC 9112 9.6).
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return response;
    }

    /** A fault makes the response claim another content type. */
    void overrideContentType(String contentType) {
        contentTypeOverride = contentType;
    }

    /** Whether a final head came. */
    boolean headCame() {
        return head != null;
    }

    /** The session the final head names, or null. */
    String headSessionId() {
        return headSessionId;
    }

    /** The head's Content-Length, -1 when it sent none. */
    long declaredLength() {
        return declaredLength;
    }

    /** Whether the upstream keeps its connection open after this response, as the response said. */
    boolean keepAlive() {
        return keepAlive;
    }

    /**
     * Whether the upstream connection is ready for another request as far as the response goes:
     * it came whole, the upstream said keep-alive, and the proxy did not take the answer over.
     */
    boolean leftIdle() {
        return state.received && keepAlive && !state.answeredHere;
    }

    /** The body strategy; null before the final head. */
    ResponseBody body() {
        return body;
    }

    /** Whether the body carries one message; read off the loop. */
    boolean oneMessageBody() {
        return oneMessageBody;
    }

    /** The final head's status, 0 before; read off the loop. */
    int status() {
        HttpResponse response = head;
        return response != null ? response.status().code() : 0;
    }

    /** The final head's fields as the upstream sent them (less what was removed once written); read off the loop. */
    List<Map.Entry<String, String>> headers() {
        HttpResponse response = head;
        return response != null ? response.headers().entries() : List.of();
    }

    /** Lets go of what the body holds; harmless twice. */
    void release() {
        if (body != null) {
            body.release();
        }
    }
}
