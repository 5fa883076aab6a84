package dev.mcpchaos.core.frame;

/**
 * A route that can show the headers of the request a frame travels with: on HTTP, the exchange.
 * Headers never change once a request arrived, so reading them from any thread is safe.
 */
public interface HeaderSource {

    /** The first value of the request header {@code name} (any case), or null. */
    String requestHeader(String name);
}
