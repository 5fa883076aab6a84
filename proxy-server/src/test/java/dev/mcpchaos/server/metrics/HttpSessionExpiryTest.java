package dev.mcpchaos.server.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Sessions the proxy forgets, seen from outside: the HTTP proxy in front of the demo HTTP server
 * (a real MCP server that keeps its sessions), with metrics, the event log and the control API.
 * Evictions and idle expiries are counted by reason and logged once each, {@code /status} and the
 * gauge show what the table holds, and a session the proxy forgot but the server still knows
 * goes on working through the proxy.
 */
@Timeout(60)
class HttpSessionExpiryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String S = "{\"jsonrpc\":\"2.0\",";
    private static final String ADD = "\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}";
    private static final String ACTIVE = "mcp_chaos_sessions_active{transport=\"http\"}";
    private static final String EVICTED = "mcp_chaos_sessions_expired_total{reason=\"evicted\",transport=\"http\"}";
    private static final String IDLE = "mcp_chaos_sessions_expired_total{reason=\"idle\",transport=\"http\"}";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final ByteArrayOutputStream events = new ByteArrayOutputStream();

    @Test
    void evictedSessionsAreCountedLoggedAndStillServedAsSessionsNeverSeen() throws Exception {
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream.endpoint())
                     .maxSessions(4)
                     .events(events, false)
                     .control(new InetSocketAddress("127.0.0.1", 0))
                     .start()) {
            URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH);
            List<String> sessions = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sessions.add(initialize(mcp));
            }
            assertThat(proxy.sessionCount()).isEqualTo(4);
            assertThat(status(proxy).path("sessions_active").asLong()).isEqualTo(4);
            Scrape m = Scrape.metrics(proxy.controlAddress());
            assertThat(m.value(ACTIVE)).isEqualTo(4.0);
            assertThat(m.value(EVICTED)).isEqualTo(6.0);
            assertThat(expiredEvents()).containsExactly(
                    sessions.get(0) + " evicted", sessions.get(1) + " evicted", sessions.get(2) + " evicted",
                    sessions.get(3) + " evicted", sessions.get(4) + " evicted", sessions.get(5) + " evicted");

            // The first session, long evicted, is one the server still has: it works as before, and is kept again.
            HttpResponse<String> sum = post(mcp, sessions.get(0), S + "\"id\":2," + ADD);
            assertThat(sum.statusCode()).isEqualTo(200);
            assertThat(sum.body()).contains("\"id\":2").contains("\"result\"").contains("3");
            assertThat(proxy.sessionCount()).isEqualTo(4);
            assertThat(Scrape.metrics(proxy.controlAddress()).value(EVICTED)).isEqualTo(7.0);
            assertThat(status(proxy).path("sessions_active").asLong()).isEqualTo(4);
        }
    }

    @Test
    void idleSessionsAreForgottenCountedAndLoggedAndTheCountShowsIt() throws Exception {
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream.endpoint())
                     .sessionIdleTimeout(Duration.ofMillis(300))
                     .events(events, false)
                     .control(new InetSocketAddress("127.0.0.1", 0))
                     .start()) {
            URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH);
            String first = initialize(mcp);
            String second = initialize(mcp);
            await().atMost(Duration.ofSeconds(10)).until(() -> proxy.sessionCount() == 0);
            assertThat(status(proxy).path("sessions_active").asLong()).isZero();
            Scrape m = Scrape.metrics(proxy.controlAddress());
            assertThat(m.value(ACTIVE)).isEqualTo(0.0);
            assertThat(m.value(IDLE)).isEqualTo(2.0);
            assertThat(m.value(EVICTED)).as("no eviction, so no series").isNull();
            assertThat(expiredEvents()).containsExactly(first + " idle", second + " idle");

            // Used again, it is kept again: the gauge follows.
            assertThat(post(mcp, first, S + "\"id\":2," + ADD).statusCode()).isEqualTo(200);
            assertThat(status(proxy).path("sessions_active").asLong()).isEqualTo(1);
        }
    }

    private String initialize(URI mcp) throws IOException, InterruptedException {
        HttpResponse<String> init = post(mcp, null, S + "\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"expiry-test\",\"version\":\"1\"}}}");
        assertThat(init.statusCode()).isEqualTo(200);
        return init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    }

    private static JsonNode status(HttpProxyBuilder.RunningHttp proxy) throws IOException {
        HttpResponse<String> status = Scrape.get(proxy.controlAddress(), "/status");
        assertThat(status.statusCode()).isEqualTo(200);
        return JSON.readTree(status.body());
    }

    /** The {@code session_expired} events logged so far, as "session reason". */
    private List<String> expiredEvents() throws IOException {
        List<String> expired = new ArrayList<>();
        for (String line : events.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            JsonNode event = JSON.readTree(line);
            if (event.path("event").asText().equals("session_expired")) {
                assertThat(event.path("transport").asText()).isEqualTo("http");
                expired.add(event.path("session").asText() + " " + event.path("reason").asText());
            }
        }
        return expired;
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
