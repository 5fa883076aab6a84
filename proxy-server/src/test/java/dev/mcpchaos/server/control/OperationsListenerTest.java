package dev.mcpchaos.server.control;

import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The operations listener: /metrics, /health and /ready, read-only and without a token. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OperationsListenerTest {

    private static final InetSocketAddress ANY_PORT = new InetSocketAddress("127.0.0.1", 0);
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> get(InetSocketAddress at, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + path))
                .timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesMetricsHealthAndReadyWithoutATokenBesideATokenedControlApi() throws Exception {
        URI upstream = URI.create("http://127.0.0.1:1/mcp");
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream).listen(ANY_PORT)
                .control(ANY_PORT).controlToken("s3cret").operations(ANY_PORT).start()) {
            InetSocketAddress ops = proxy.operationsAddress();
            assertThat(ops).isNotNull();
            assertThat(ops.getPort()).isNotEqualTo(proxy.address().getPort()).isNotEqualTo(proxy.controlAddress().getPort());

            HttpResponse<String> health = get(ops, "/health");
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).isEqualTo("ok");
            HttpResponse<String> ready = get(ops, "/ready");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).isEqualTo("ready");

            // The same registry as the control API's /metrics, which still asks for its token.
            HttpResponse<String> metrics = get(ops, "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type")).hasValue(ControlServer.PROMETHEUS_CONTENT_TYPE);
            assertThat(metrics.body()).contains("mcp_chaos_draining 0.0")
                    .contains("mcp_chaos_drain_exchanges_total{outcome=\"finished\"} 0.0")
                    .contains("mcp_chaos_operations_timeouts_total{phase=\"head\"} 0.0")
                    .contains("mcp_chaos_control_timeouts_total{phase=\"head\"} 0.0")
                    .contains("jvm_memory_used_bytes");
            assertThat(get(proxy.controlAddress(), "/metrics").statusCode()).isEqualTo(401);
            HttpResponse<String> control = get(proxy.controlAddress(), "/metrics", "Authorization", "Bearer s3cret");
            assertThat(control.statusCode()).isEqualTo(200);
            assertThat(control.body()).contains("mcp_chaos_operations_timeouts_total");

            assertThat(get(ops, "/status").statusCode()).isEqualTo(404);
            assertThat(get(ops, "/status").body()).contains("expected: /metrics, /health or /ready");
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.getPort()
                    + "/ready")).POST(HttpRequest.BodyPublishers.ofString("{\"x\":1}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
            assertThat(post.body()).contains("read-only");
            HttpResponse<Void> head = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.getPort()
                    + "/health")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.discarding());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.headers().firstValue("Content-Length")).hasValue("2");

            // The control API's hardened server under it: a request that is not HTTP is a 400 and a close.
            try (Socket raw = new Socket("127.0.0.1", ops.getPort())) {
                raw.setSoTimeout(10_000);
                OutputStream out = raw.getOutputStream();
                out.write("GARBAGE\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String answer = new String(raw.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                assertThat(answer).startsWith("HTTP/1.1 400 ").contains("not valid HTTP/1.1");
            }

            // Draining: /ready turns 503 at once, /health stays 200.
            proxy.drain(Duration.ZERO);
            HttpResponse<String> draining = get(ops, "/ready");
            assertThat(draining.statusCode()).isEqualTo(503);
            assertThat(draining.body()).isEqualTo("not ready: draining: the proxy is shutting down");
            assertThat(get(ops, "/health").statusCode()).isEqualTo(200);
            assertThat(get(ops, "/metrics").body()).contains("mcp_chaos_draining 1.0");
        }
    }

    @Test
    void withReadyRequiresUpstreamReadyFollowsWhetherTheUpstreamTakesConnections() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        URI upstream = URI.create("http://127.0.0.1:" + port + "/mcp");
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream).listen(ANY_PORT)
                .operations(ANY_PORT).readyRequiresUpstream(true).start()) {
            InetSocketAddress ops = proxy.operationsAddress();
            await().atMost(Duration.ofSeconds(10)).until(() -> get(ops, "/ready").body().contains("does not take"));
            HttpResponse<String> down = get(ops, "/ready");
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).startsWith("not ready: the upstream 127.0.0.1:" + port + " (" + upstream + ")");

            try (ServerSocket server = new ServerSocket()) {
                server.setReuseAddress(true);
                server.bind(new InetSocketAddress("127.0.0.1", port));
                await().atMost(Duration.ofSeconds(10)).until(() -> get(ops, "/ready").statusCode() == 200);
                assertThat(get(ops, "/health").statusCode()).isEqualTo(200);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> get(ops, "/ready").statusCode() == 503);
        }
    }

    @Test
    void aStdioProxyServesItTooAndIsReadyWhileTheServerRuns() throws Exception {
        try (CatProxy cat = new CatProxy(b -> b.operations(ANY_PORT))) {
            InetSocketAddress ops = cat.proxy.operationsAddress();
            assertThat(ops).isNotNull();
            assertThat(get(ops, "/ready").statusCode()).isEqualTo(200);
            assertThat(get(ops, "/metrics").body()).contains("mcp_chaos_operations_timeouts_total");
        }
    }

    @Test
    void anAddressInUseIsAClearError() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", taken.getLocalPort());
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> McpChaosProxy.http(URI.create("http://127.0.0.1:1/"))
                    .listen(ANY_PORT).operations(at).start())
                    .isInstanceOf(dev.mcpchaos.server.ProxyStartException.class)
                    .hasCauseInstanceOf(IOException.class)
                    .hasMessageContaining("cannot listen for operations requests on 127.0.0.1:" + at.getPort());
        }
    }
}
