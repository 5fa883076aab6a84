package dev.mcpchaos.server.rules;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code priming_drop} end to end: the JDK's HTTP client through the proxy to the demo server,
 * which starts every SSE stream with a priming event (an id, empty data) for a 2025-11-25 client.
 * With the rule, the stream's first message comes without it, and the fault is seen firing on that
 * message; with other rules, or a priming rule that does not fire, the priming event still comes,
 * before the first message, byte for byte.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpPrimingDropTest {

    private static final String VERSION = "2025-11-25";
    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"" + VERSION + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    private static final String SLOW = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
            + "\"arguments\":{\"ms\":20},\"_meta\":{\"progressToken\":\"p2\"}}}";

    private McpHttpHost upstream;
    private HttpProxyBuilder.RunningHttp proxy;
    private final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private String session;

    @BeforeEach
    void startUpstream() throws Exception {
        upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0)).primingEvents(true);
    }

    @AfterEach
    void stop() {
        if (proxy != null) {
            proxy.close();
        }
        upstream.close();
    }

    private void startProxy(String yaml) throws Exception {
        proxy = McpChaosProxy.http(upstream.endpoint())
                .rules(RuleSet.parse(yaml, "test.yaml"))
                .seed(7)
                .faultListener(faults::add)
                .start();
        HttpResponse<String> init = post(INIT);
        assertThat(init.statusCode()).isEqualTo(200);
        session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    private HttpResponse<String> post(String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", VERSION)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The SSE answer's events, as the client read them (each without its blank line). */
    private List<String> slowCallEvents() throws Exception {
        HttpResponse<String> response = post(SLOW);
        assertThat(response.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        return List.of(response.body().replace("\r\n", "\n").split("\n\n"));
    }

    private static boolean isPriming(String event) {
        return event.startsWith("id:") && event.lines().filter(l -> l.startsWith("data:"))
                .allMatch(l -> l.substring(5).isBlank());
    }

    @Test
    void withAnotherRuleThePrimingEventComesFirstAsBefore() throws Exception {
        startProxy("rules:\n  - {name: other, match: {method: tools/list}, fault: {type: latency, latency: 1ms}}\n");
        List<String> events = slowCallEvents();
        assertThat(events.get(0)).as("the priming event, first").satisfies(e -> assertThat(isPriming(e)).isTrue());
        assertThat(events.get(1)).contains("notifications/progress");
        assertThat(events.get(events.size() - 1)).contains("\"result\"");
        assertThat(faults).isEmpty();
    }

    @Test
    void theRuleRemovesThePrimingEventBeforeTheFirstMessageAndIsSeenFiringOnIt() throws Exception {
        startProxy("rules:\n  - {name: no-priming, match: {method: notifications/progress}, times: 1,"
                + " fault: {type: priming_drop}}\n");
        List<String> events = slowCallEvents();
        assertThat(events).noneMatch(HttpPrimingDropTest::isPriming);
        assertThat(events.get(0)).as("the first message, with its own id").startsWith("id:")
                .contains("notifications/progress");
        assertThat(events.get(events.size() - 1)).contains("\"result\"");
        assertThat(faults).singleElement().satisfies(e -> {
            assertThat(e.fault()).isEqualTo("priming_drop");
            assertThat(e.method()).isEqualTo("notifications/progress");
            assertThat(e.detail()).matches("removed the priming event before it \\(id .+\\)");
        });
    }

    @Test
    void aPrimingRuleThatDoesNotFireStillDeliversThePrimingEventBeforeTheFirstMessage() throws Exception {
        startProxy("rules:\n  - {name: elsewhere, match: {method: tools/list}, fault: {type: priming_drop}}\n");
        List<String> events = slowCallEvents();
        assertThat(events.get(0)).satisfies(e -> assertThat(isPriming(e)).as(e).isTrue());
        assertThat(events.get(1)).contains("notifications/progress");
        assertThat(events.get(events.size() - 1)).contains("\"result\"");
        assertThat(faults).isEmpty();
    }
}
