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
