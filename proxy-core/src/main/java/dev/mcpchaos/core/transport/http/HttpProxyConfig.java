package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.observe.TransportObserver;
import io.netty.handler.ssl.SslContext;

import java.net.InetSocketAddress;

/** The settings of a running {@link HttpProxy}, fixed at start. */
final class HttpProxyConfig {
    final InetSocketAddress upstream;
    final String upstreamLabel;
    final String upstreamHostHeader;
    final SslContext upstreamTls;
    final boolean rewriteHost;
    final int maxRequestBody;
    final int maxJsonResponseBody;
    final int maxSseEventSize;
    final int maxHeaderSize;
    final int maxConnections;
    final int connectTimeoutMillis;
    final long responseTimeoutMillis;
    /** The longest wait between two pieces of a response body that is not an SSE stream. */
    final long responseBodyTimeoutMillis;
    final long idleTimeoutMillis;
    /** From the first byte of a request head to its end. */
    final long requestHeadTimeoutMillis;
    /** From the end of a request head to the last byte of its body. */
    final long requestBodyTimeoutMillis;
    /** The least a request body must average, in bytes per second, after its first second; 0: no minimum. */
    final long minRequestBodyRate;
    /** The longest a client connection may stay unwritable (a client that does not read). */
    final long sendTimeoutMillis;
    final TransportObserver observer;

    HttpProxyConfig(InetSocketAddress upstream, String upstreamLabel, String upstreamHostHeader, SslContext upstreamTls,
                    boolean rewriteHost, int maxRequestBody, int maxJsonResponseBody, int maxSseEventSize,
                    int maxHeaderSize, int maxConnections, int connectTimeoutMillis, long responseTimeoutMillis,
                    long responseBodyTimeoutMillis, long idleTimeoutMillis, long requestHeadTimeoutMillis,
                    long requestBodyTimeoutMillis, long minRequestBodyRate, long sendTimeoutMillis,
                    TransportObserver observer) {
        this.upstream = upstream;
        this.upstreamLabel = upstreamLabel;
        this.upstreamHostHeader = upstreamHostHeader;
        this.upstreamTls = upstreamTls;
        this.rewriteHost = rewriteHost;
        this.maxRequestBody = maxRequestBody;
        this.maxJsonResponseBody = maxJsonResponseBody;
        this.maxSseEventSize = maxSseEventSize;
        this.maxHeaderSize = maxHeaderSize;
        this.maxConnections = maxConnections;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.responseTimeoutMillis = responseTimeoutMillis;
        this.responseBodyTimeoutMillis = responseBodyTimeoutMillis;
        this.idleTimeoutMillis = idleTimeoutMillis;
        this.requestHeadTimeoutMillis = requestHeadTimeoutMillis;
        this.requestBodyTimeoutMillis = requestBodyTimeoutMillis;
        this.minRequestBodyRate = minRequestBodyRate;
        this.sendTimeoutMillis = sendTimeoutMillis;
        this.observer = observer;
    }
}
