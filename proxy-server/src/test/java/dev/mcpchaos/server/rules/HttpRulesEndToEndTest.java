package dev.mcpchaos.server.rules;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.ProxyStartException;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Rules on the HTTP transport, end to end: a real client (the JDK's) through the proxy to the
 * built-in demo server over Streamable HTTP, on 127.0.0.1. Shows what a client sees for the
 * HTTP-only faults, for a JSON-RPC error, for header matching, and that rules that cannot work on
 * HTTP are refused before anything listens.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpRulesEndToEndTest {

    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

    private McpHttpHost upstream;
    private HttpProxyBuilder.RunningHttp proxy;
    private final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private String session;

    @BeforeEach
    void startUpstream() throws Exception {
        upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
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
    }

    private HttpResponse<String> post(String body, String... headers) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void initialize() throws Exception {
        HttpResponse<String> response = post(INIT);
        assertThat(response.statusCode()).isEqualTo(200);
        session = response.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode()).isEqualTo(202);
    }

    private static String call(int id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    @Test
    void httpStatusAnswersTheMatchingRequestInsteadOfTheServer() throws Exception {
        startProxy("rules:\n"
                + "  - name: busy-add\n"
                + "    match: {method: tools/call, tool: add}\n"
                + "    fault: {type: http_status, status: 503, headers: {Retry-After: '3'}, body: busy}\n");
        initialize();
        HttpResponse<String> busy = post(call(2, "add", "{\"a\":1,\"b\":2}"));
        assertThat(busy.statusCode()).isEqualTo(503);
        assertThat(busy.headers().firstValue("Retry-After")).hasValue("3");
        assertThat(busy.body()).isEqualTo("busy");
        assertThat(busy.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
        HttpResponse<String> echo = post(call(3, "echo", "{\"text\":\"hi\"}"));
        assertThat(echo.statusCode()).isEqualTo(200);
        assertThat(echo.body()).contains("\"text\":\"hi\"");
        assertThat(faults).extracting(FaultEvent::rule, FaultEvent::fault, FaultEvent::tool)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("busy-add", "http_status", "add"));
    }

    @Test
    void errorFaultAnswersWithAJsonRpcErrorOfTheSameId() throws Exception {
        startProxy("rules:\n"
                + "  - name: broken-echo\n"
                + "    match: {tool: echo, kind: request}\n"
                + "    fault: {type: error, code: -32603, message: injected failure}\n");
        initialize();
        HttpResponse<String> response = post(call(9, "echo", "{\"text\":\"hi\"}"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"id\":9").contains("-32603").contains("injected failure")
                .doesNotContain("\"result\"");
    }

    @Test
    void invalidContentTypeMakesTheResponseLie() throws Exception {
        startProxy("rules:\n"
                + "  - name: html\n"
                + "    match: {tool: echo, kind: response}\n"
                + "    fault: {type: invalid_content_type, content_type: text/html}\n");
        initialize();
        HttpResponse<String> response = post(call(4, "echo", "{\"text\":\"hi\"}"));
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html");
        assertThat(response.body()).contains("\"text\":\"hi\"");
    }

    @Test
    void sessionExpireMakesTheSessionUnknownFromThenOn() throws Exception {
        startProxy("rules:\n"
                + "  - name: expire\n"
                + "    match: {method: tools/list}\n"
                + "    fault: {type: session_expire}\n");
        initialize();
        // The request that meets the fault gets the same answer as every later one: 404 and a JSON-RPC error.
        HttpResponse<String> expiring = post("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}");
        assertThat(expiring.statusCode()).isEqualTo(404);
        assertThat(expiring.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(expiring.body()).contains("\"id\":5").contains("\"error\"").contains("expired");
        HttpResponse<String> after = post(call(6, "echo", "{\"text\":\"hi\"}"));
        assertThat(after.statusCode()).isEqualTo(404);
        assertThat(after.body()).contains("\"id\":6").contains("\"error\"").contains("expired");
    }

    @Test
    void aServerSideDisconnectAtARequestAnswers502AndTheNextCallWorks() throws Exception {
        startProxy("rules:\n"
                + "  - name: server-gone\n"
                + "    match: {tool: add, kind: request}\n"
                + "    times: 1\n"
                + "    fault: {type: disconnect, side: server}\n");
        initialize();
        HttpResponse<String> cut = post(call(3, "add", "{\"a\":1,\"b\":2}"));
        assertThat(cut.statusCode()).isEqualTo(502);
        assertThat(cut.body()).contains("\"id\":3").contains("\"error\"").contains("closed the connection");
        HttpResponse<String> next = post(call(4, "add", "{\"a\":1,\"b\":2}"));
        assertThat(next.statusCode()).isEqualTo(200);
        assertThat(next.body()).contains("\"id\":4").contains("\"result\"");
        assertThat(faults).extracting(FaultEvent::fault).containsExactly("disconnect");
    }

    /**
     * A fault's event is out before the client has what the fault did: a test that reads the
     * journal as soon as its call returns must find the fault there. A fault listener that takes
     * 150 ms (an event log on a slow disk) holds the event back; an answer written while it runs
     * would reach the client first. Counted after every answer, with untouched calls between.
     */
    @Test
    void aFaultsEventIsPublishedBeforeTheClientHasWhatTheFaultDid() throws Exception {
        proxy = McpChaosProxy.http(upstream.endpoint())
                .rules(RuleSet.parse("rules:\n"
                        + "  - name: busy-add\n"
                        + "    match: {method: tools/call, tool: add}\n"
                        + "    fault: {type: http_status, status: 503}\n"
                        + "  - name: server-gone\n"
                        + "    match: {method: tools/call, tool: large}\n"
                        + "    fault: {type: disconnect, side: server}\n"
                        + "  - name: expire\n"
                        + "    match: {method: tools/list}\n"
                        + "    fault: {type: session_expire}\n", "test.yaml"))
                .seed(7)
                .faultListener(event -> {
                    try {
                        Thread.sleep(150);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    faults.add(event);
                })
                .start();
        initialize();
        int id = 10;
        for (int round = 0; round < 3; round++) {
            HttpResponse<String> busy = post(call(id++, "add", "{\"a\":1,\"b\":2}"));
            assertThat(busy.statusCode()).isEqualTo(503);
            assertThat(faults).as("events when the 503 arrived").hasSize(2 * round + 1);
            HttpResponse<String> cut = post(call(id++, "large", "{\"bytes\":10}"));
            assertThat(cut.statusCode()).as(cut.body()).isEqualTo(502);
            assertThat(faults).as("events when the 502 arrived").hasSize(2 * round + 2);
            HttpResponse<String> echo = post(call(id++, "echo", "{\"text\":\"r" + round + "\"}"));
            assertThat(echo.statusCode()).isEqualTo(200);
            assertThat(echo.body()).contains("\"text\":\"r" + round + "\"");
            assertThat(faults).as("an untouched call adds no event").hasSize(2 * round + 2);
        }
        HttpResponse<String> expired = post("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/list\"}");
        assertThat(expired.statusCode()).isEqualTo(404);
        assertThat(faults).as("events when the 404 arrived").hasSize(7);
        assertThat(faults).extracting(FaultEvent::fault).containsExactly("http_status", "disconnect", "http_status",
                "disconnect", "http_status", "disconnect", "session_expire");
    }

    @Test
    void headerGlobsPickTheRequestsOfOneTenant() throws Exception {
        startProxy("rules:\n"
                + "  - name: blue-tenant\n"
                + "    match: {kind: request, method: tools/call, headers: {X-Tenant: 'blue*'}}\n"
                + "    fault: {type: error, code: -32001, message: blue is down}\n");
        initialize();
        assertThat(post(call(7, "echo", "{\"text\":\"x\"}"), "X-Tenant", "blue-eu").body()).contains("blue is down");
        assertThat(post(call(8, "echo", "{\"text\":\"x\"}"), "X-Tenant", "green").body()).contains("\"text\":\"x\"");
        assertThat(post(call(9, "echo", "{\"text\":\"x\"}")).body()).contains("\"text\":\"x\"");
    }

    @Test
    void latencyHoldsTheAnswer() throws Exception {
        startProxy("rules:\n"
                + "  - name: slow-add\n"
                + "    match: {tool: add, kind: response}\n"
                + "    fault: {type: latency, latency: 700ms}\n");
        initialize();
        long started = System.nanoTime();
        HttpResponse<String> response = post(call(2, "add", "{\"a\":2,\"b\":3}"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
        assertThat(response.body()).contains("\"text\":\"5\"");
    }

    @Test
    void rulesThatCannotWorkOnHttpAreRefusedBeforeAnythingListens() {
        assertThatThrownBy(() -> McpChaosProxy.http(upstream.endpoint())
                .rules(RuleSet.parse("rules:\n  - name: boom\n    fault: {type: crash}\n", "test.yaml"))
                .start())
                .isInstanceOf(ProxyStartException.class)
                .hasCauseInstanceOf(RuleFileException.class)
                .hasMessage("test.yaml: rule 'boom': crash: only applies to the stdio transport "
                        + "(this proxy runs the http transport)");
    }
}
