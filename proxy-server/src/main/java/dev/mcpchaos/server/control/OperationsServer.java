package dev.mcpchaos.server.control;

import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The operations listener: what an orchestrator and a metrics scraper ask of a running proxy,
 * read-only and without a token, on an address apart from the proxy's and the control API's
 * (Envoy's and Linkerd's admin ports work the same way). The reference is
 * {@code docs/operations.md}.
 *
 * <table>
 *   <caption>Endpoints (GET or HEAD; any other method is 405, any other path 404)</caption>
 *   <tr><td>{@code /metrics}</td><td>Prometheus text, from the same registry as the control API's {@code /metrics}</td></tr>
 *   <tr><td>{@code /health}</td><td>200 {@code ok} while the process runs (liveness)</td></tr>
 *   <tr><td>{@code /ready}</td><td>200 {@code ready} when the proxy takes traffic; else 503 with the reason (readiness)</td></tr>
 * </table>
 *
 * <p>It changes nothing, so it needs no token, and it may listen on all interfaces. It runs on
 * the same hardened server as the control API ({@link HttpEndpoint}: deadlines on every phase of
 * a request, strict parsing, a bounded body), with the control API's default deadlines; its
 * closes for slow clients are counted in {@value ProxyMetrics#OPERATIONS_TIMEOUTS}.
 */
public final class OperationsServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OperationsServer.class);

    /** A request body is never wanted here; a small one is read and dropped, a larger one gets 413. */
    private static final int MAX_BODY_BYTES = 1024;
    private static final String TEXT_TYPE = "text/plain; charset=utf-8";
    private static final String ALLOWED = "GET, HEAD";

    /** Whether the proxy takes traffic now. Asked on the listener's event loop: answer at once, never block. */
    @FunctionalInterface
    public interface Readiness {
        /** Null when the proxy is ready, else why not in a few words ({@code draining: ...}). */
        String notReadyBecause();
    }

    private final PrometheusMeterRegistry registry;
    private final Readiness readiness;
    private final HttpEndpoint endpoint;

    private OperationsServer(InetSocketAddress address, PrometheusMeterRegistry registry, Readiness readiness)
            throws IOException {
        this.registry = registry;
        this.readiness = readiness;
        HttpEndpoint.TimeoutCounters timeouts = new HttpEndpoint.TimeoutCounters(timeoutCounter("head"),
                timeoutCounter("body"), timeoutCounter("send"));
        this.endpoint = new HttpEndpoint("operations", address, new HttpEndpoint.Handler() {
            @Override
            public FullHttpResponse handle(FullHttpRequest request, String peer) {
                return answer(request);
            }

            @Override
            public boolean answerFromHead(HttpRequest head) {
                return !isRead(head.method().name()); // 405 at once; a body it sent is read and dropped
            }
        }, MAX_BODY_BYTES, ControlServer.DEFAULT_HEAD_TIMEOUT, ControlServer.DEFAULT_BODY_TIMEOUT,
                ControlServer.DEFAULT_IDLE_TIMEOUT, timeouts);
    }

    /**
     * Serves the operations endpoints on {@code address} (port 0: any free port).
     *
     * @param registry  the meters {@code /metrics} serves
     * @param readiness what {@code /ready} answers
     * @throws IOException when the address cannot be bound
     */
    public static OperationsServer start(InetSocketAddress address, PrometheusMeterRegistry registry,
                                         Readiness readiness) throws IOException {
        Objects.requireNonNull(address, "address");
        OperationsServer server = new OperationsServer(address, Objects.requireNonNull(registry, "registry"),
                Objects.requireNonNull(readiness, "readiness"));
        InetSocketAddress bound = server.address();
        log.info("operations listener on http://{}:{}/ (/metrics, /health, /ready; read-only, no token)",
                bound.getHostString(), bound.getPort());
        return server;
    }

    private Counter timeoutCounter(String phase) {
        return Counter.builder(ProxyMetrics.OPERATIONS_TIMEOUTS)
                .description("Operations listener connections closed because a phase of a request took too long")
                .tag("phase", phase)
                .register(registry);
    }

    /** The address it listens on (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return endpoint.address();
    }

    private static boolean isRead(String method) {
        return "GET".equals(method) || "HEAD".equals(method);
    }

    private FullHttpResponse answer(FullHttpRequest request) {
        String method = request.method().name();
        boolean head = "HEAD".equals(method);
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            return HttpEndpoint.error(400, "request target: '" + request.uri() + "': " + e.getMessage()
                    + " (expected: /metrics, /health or /ready)", head);
        }
        boolean known = path.equals("/metrics") || path.equals("/health") || path.equals("/ready");
        if (!known) {
            return HttpEndpoint.error(404, "not found: " + path + " (expected: /metrics, /health or /ready)", head);
        }
        if (!isRead(method)) {
            FullHttpResponse refused = HttpEndpoint.error(405, method + " " + path
                    + ": not allowed (expected: GET or HEAD; this listener is read-only)", false);
            refused.headers().set(HttpHeaderNames.ALLOW, ALLOWED);
            return refused;
        }
        switch (path) {
            case "/metrics":
                return HttpEndpoint.response(200, ControlServer.PROMETHEUS_CONTENT_TYPE, registry.scrape(), head);
            case "/health":
                return HttpEndpoint.response(200, TEXT_TYPE, "ok", head);
            default:
                String why;
                try {
                    why = readiness.notReadyBecause();
                } catch (RuntimeException e) {
                    log.warn("the readiness check failed", e);
                    why = "the readiness check failed: " + e;
                }
                return why == null ? HttpEndpoint.response(200, TEXT_TYPE, "ready", head)
                        : HttpEndpoint.response(503, TEXT_TYPE, "not ready: " + why, head);
        }
    }

    /** Stops listening and closes every connection at once. */
    @Override
    public void close() {
        endpoint.close();
    }
}
