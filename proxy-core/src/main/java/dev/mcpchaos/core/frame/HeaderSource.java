package dev.mcpchaos.core.frame;

import java.util.List;
import java.util.Map;

/**
 * A route that can show the headers of the request a frame travels with: on HTTP, the exchange.
 * Headers never change once a request arrived, so reading them from any thread is safe.
 */
public interface HeaderSource {

    /** The first value of the request header {@code name} (any case), or null. */
    String requestHeader(String name);

    /**
     * The request's method ({@code POST}, {@code GET}, {@code DELETE}), or null when unknown. For
     * the recorder, which writes the exchange a message travelled on.
     */
    default String requestMethod() {
        return null;
    }

    /** The request's target (path and query) as the client sent it, or null when unknown. */
    default String requestUri() {
        return null;
    }

    /**
     * Every request header as the client sent it, in order (a name may repeat), or an empty list
     * when unknown. Values are the client's, secrets included: whoever keeps them redacts them.
     */
    default List<Map.Entry<String, String>> requestHeaders() {
        return List.of();
    }

    /**
     * The status of the response head the client got on this exchange: the upstream's, or one
     * the proxy answered with itself (a fault's 503, an expired session's 404, a 502); 0 while
     * none has gone. Read from any thread: a client request answered with an HTTP error has no
     * JSON-RPC answer to wait for.
     */
    default int answeredStatus() {
        return 0;
    }

    /** The status of the upstream's final response, or 0 while none has come. */
    default int responseStatus() {
        return 0;
    }

    /**
     * Every header of the upstream's final response, in order, as the upstream sent it; an empty
     * list while none has come.
     */
    default List<Map.Entry<String, String>> responseHeaders() {
        return List.of();
    }
}
