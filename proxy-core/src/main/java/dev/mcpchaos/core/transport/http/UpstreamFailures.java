package dev.mcpchaos.core.transport.http;

import io.netty.handler.ssl.NotSslRecordException;

import java.net.InetSocketAddress;

/**
 * The words for an upstream the proxy could not use, as the client's 502 and the log say them.
 * Netty's own messages are for Netty's readers: a plain HTTP server behind an {@code https://}
 * URL comes out as {@code NotSslRecordException: not an SSL/TLS record: 485454502f...}, a hex dump
 * of its HTTP answer to the ClientHello, under "cannot reach" although it was reached.
 */
final class UpstreamFailures {

    private UpstreamFailures() {
    }

    /**
     * {@code the upstream at HOST:PORT did not answer TLS (is it plain http?)} when {@code cause}
     * (or a cause of it) says that what came back on a TLS connection was not TLS, else null.
     */
    static String notTls(Throwable cause, InetSocketAddress upstream) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NotSslRecordException) {
                // The dump of what it sent says nothing a person reads; what it means does.
                return "the upstream at " + upstream.getHostString() + ":" + upstream.getPort()
                        + " did not answer TLS (is it plain http?)";
            }
        }
        return null;
    }
}
