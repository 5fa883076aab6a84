package dev.mcpchaos.server.control;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The control port: for now {@code GET /health} (200 {@code ok}) and {@code GET /metrics}
 * (Prometheus text). Anything else is 404, another method on those paths 405. Served by the
 * JDK's HTTP server on one daemon thread; bind it to loopback (nothing here is authenticated).
 *
 * <pre>{@code
 * try (ControlServer control = ControlServer.start(new InetSocketAddress("127.0.0.1", 9090), registry)) {
 *     ...
 * }
 * }</pre>
 */
public final class ControlServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ControlServer.class);

    /** The Prometheus text exposition format's content type. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrometheusMeterRegistry registry;

    private ControlServer(HttpServer server, ExecutorService executor, PrometheusMeterRegistry registry) {
        this.server = server;
        this.executor = executor;
        this.registry = registry;
    }

    /**
     * Binds {@code address} (port 0: any free port) and starts serving.
     *
     * @throws IOException when the address cannot be bound
     */
    public static ControlServer start(InetSocketAddress address, PrometheusMeterRegistry registry) throws IOException {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(registry, "registry");
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (IOException e) {
            throw new IOException("cannot listen for control requests on " + address + ": " + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "mcp-chaos-control");
            thread.setDaemon(true);
            return thread;
        });
        ControlServer control = new ControlServer(server, executor, registry);
        server.createContext("/", control::handle);
        server.setExecutor(executor);
        server.start();
        log.info("control endpoint on http://{}:{}/ (/health, /metrics)",
                server.getAddress().getHostString(), server.getAddress().getPort());
        return control;
    }

    /** The address it listens on (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (!"/health".equals(path) && !"/metrics".equals(path)) {
                send(exchange, 404, "text/plain; charset=utf-8", "not found: " + path + "\n");
            } else if (!"GET".equals(method) && !"HEAD".equals(method)) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, 405, "text/plain; charset=utf-8", method + " " + path + ": not allowed (expected: GET)\n");
            } else if ("/health".equals(path)) {
                send(exchange, 200, "text/plain; charset=utf-8", "ok");
            } else {
                send(exchange, 200, PROMETHEUS_CONTENT_TYPE, registry.scrape());
            }
        } catch (RuntimeException e) {
            log.warn("control request {} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            throw e;
        }
    }

    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        boolean head = "HEAD".equals(exchange.getRequestMethod());
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** Stops listening at once. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
