package dev.mcpchaos.server.metrics;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The HTTP proxy in front of the demo HTTP server, with one rule: the scraped counts are exact. */
@Timeout(60)
class HttpMetricsTest {

    private static final String RULES = "rules:\n"
            + "  - name: add-fails-once\n"
            + "    match: {direction: client_to_server, kind: request, method: tools/call, tool: add}\n"
            + "    times: 1\n"
            + "    fault: {type: error, code: -32050, message: injected}\n";
    private static final String S = "{\"jsonrpc\":\"2.0\",";
    private static final String ADD = "\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void scrapedCountsAreExactAfterAKnownExchangeAndRules() throws Exception {
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream.endpoint())
                     .rules(RuleSet.parse(RULES, "rules.yaml"))
                     .seed(1)
                     .control(new InetSocketAddress("127.0.0.1", 0))
                     .start()) {
            URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH);
            InetSocketAddress control = proxy.controlAddress();
            assertThat(Scrape.metrics(control).value("mcp_chaos_sessions_active{transport=\"http\"}")).isEqualTo(0.0);

            HttpResponse<String> init = post(mcp, null, S + "\"id\":1,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"metrics-test\",\"version\":\"1\"}}}");
            assertThat(init.statusCode()).isEqualTo(200);
            String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
            assertThat(post(mcp, session, S + "\"method\":\"notifications/initialized\"}").statusCode()).isEqualTo(202);
            assertThat(post(mcp, session, S + "\"id\":2," + ADD).body()).contains("injected");
            assertThat(post(mcp, session, S + "\"id\":3," + ADD).body()).contains("\"result\"");
            assertThat(post(mcp, session, S + "\"id\":4,\"method\":\"ping\"}").statusCode()).isEqualTo(200);

            Scrape m = Scrape.metrics(control);
            String c2s = "mcp_chaos_messages_total{direction=\"client_to_server\",kind=\"%s\",method=\"%s\",transport=\"http\"}";
            assertThat(m.value(c2s.formatted("request", "initialize"))).isEqualTo(1.0);
            assertThat(m.value(c2s.formatted("notification", "notifications/initialized"))).isEqualTo(1.0);
            assertThat(m.value(c2s.formatted("request", "tools/call"))).isEqualTo(2.0);
            assertThat(m.value(c2s.formatted("request", "ping"))).isEqualTo(1.0);
            String s2c = "mcp_chaos_messages_total{direction=\"server_to_client\",kind=\"%s\",method=\"%s\",transport=\"http\"}";
            assertThat(m.value(s2c.formatted("response", "initialize"))).isEqualTo(1.0);
            assertThat(m.value(s2c.formatted("response", "tools/call"))).isEqualTo(1.0);
            assertThat(m.value(s2c.formatted("response", "ping"))).isEqualTo(1.0);
            assertThat(m.family("mcp_chaos_messages_total{").lines().count())
                    .as(m.family("mcp_chaos_messages_total")).isEqualTo(7);
            assertThat(m.value("mcp_chaos_faults_injected_total{fault=\"error\",rule=\"add-fails-once\"}")).isEqualTo(1.0);
            String duration = "mcp_chaos_request_duration_seconds_count{method=\"%s\",transport=\"http\"}";
            assertThat(m.value(duration.formatted("initialize"))).isEqualTo(1.0);
            assertThat(m.value(duration.formatted("tools/call"))).isEqualTo(1.0);
            assertThat(m.value(duration.formatted("ping"))).isEqualTo(1.0);
            assertThat(m.value("mcp_chaos_sessions_active{transport=\"http\"}")).isEqualTo(1.0);

            HttpResponse<String> deleted = http.send(HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(10))
                    .header("Mcp-Session-Id", session).DELETE().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(deleted.statusCode()).isEqualTo(204);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    Scrape.metrics(control).value("mcp_chaos_sessions_active{transport=\"http\"}")).isEqualTo(0.0));
        }
    }

    @Test
    void anUnreachableUpstreamIsCounted() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(URI.create("http://127.0.0.1:" + closedPort + "/mcp"))
                .metrics(registry)
                .control(new InetSocketAddress("127.0.0.1", 0))
                .start()) {
            URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp");
            for (int id = 1; id <= 2; id++) {
                assertThat(post(mcp, null, S + "\"id\":" + id + ",\"method\":\"ping\"}").statusCode()).isEqualTo(502);
            }
            Scrape m = Scrape.metrics(proxy.controlAddress());
            assertThat(m.value("mcp_chaos_upstream_errors_total{reason=\"unreachable\",transport=\"http\"}")).isEqualTo(2.0);
            assertThat(m.value("mcp_chaos_messages_total{direction=\"client_to_server\",kind=\"request\",method=\"ping\","
                    + "transport=\"http\"}")).isEqualTo(2.0);
            // The registry was the caller's: no JVM meters were bound to it.
            assertThat(m.body).doesNotContain("jvm_memory_used_bytes");
        }
    }

    private HttpResponse<String> post(URI uri, String session, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
