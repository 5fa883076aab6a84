package dev.mcpchaos.server.rules;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransportException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What the official MCP Java SDK client (2.1.0, {@link HttpClientStreamableHttpTransport})
 * experiences when mcp-chaos breaks Streamable HTTP traffic to the built-in demo server: the
 * HTTP-only faults, a disconnect mid-call, latency past its request timeout, and injected errors.
 * Everything on 127.0.0.1; the demo server runs in this JVM, the proxy too (so the test sees its
 * {@link FaultEvent}s). One rule file per test; each rule breaks one message ({@code times: 1})
 * so that the test can also show whether the client's session survives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpFaultsSdkEndToEndTest {

    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(2);

    private McpHttpHost upstream;
    private HttpProxyBuilder.RunningHttp proxy;
    private McpSyncClient client;
    private final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
    private final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startUpstream() throws Exception {
        upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stop() {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            try {
                if (proxy != null) {
                    proxy.close();
                }
            } finally {
                upstream.close();
            }
        }
    }

    /** Starts the proxy with these rules and an SDK client through it, initialized. */
    private void connect(String rulesYaml) throws Exception {
        proxy = McpChaosProxy.http(upstream.endpoint())
                .rules(RuleSet.parse(rulesYaml, "test.yaml"))
                .seed(7)
                .faultListener(faults::add)
                .start();
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://127.0.0.1:" + proxy.address().getPort())
                .endpoint(McpHttpHost.PATH)
                .build();
        client = McpClient.sync(transport)
                .requestTimeout(CLIENT_TIMEOUT)
                .initializationTimeout(CLIENT_TIMEOUT)
                .clientInfo(McpSchema.Implementation.builder("http-faults-e2e", "1.0").build())
                .progressConsumer(progress::add)
                .build();
        client.initialize();
    }

    private McpSchema.CallToolResult call(String tool, Map<String, Object> arguments) {
        return client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build());
    }

    private static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }

    private FaultEvent onlyEventOf(String rule) {
        return faults.stream().filter(e -> e.rule().equals(rule)).reduce((a, b) -> {
            throw new AssertionError("more than one event of rule " + rule + ": " + faults);
        }).orElseThrow(() -> new AssertionError("no event of rule " + rule + ": " + faults));
    }

    @Test
    void http503FailsTheCallWithATransportExceptionAndTheSessionGoesOn() throws Exception {
        // The SDK neither retries nor reads Retry-After: the call fails at once.
        connect("rules:\n  - name: busy\n    match: {kind: request, tool: add}\n    times: 1\n"
                + "    fault: {type: http_status, status: 503, headers: {Retry-After: '2'}, body: busy}\n");
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> call("add", Map.of("a", 1, "b", 2)));

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLIENT_TIMEOUT);
        assertThat(failure).isInstanceOf(McpTransportException.class)
                .hasMessage("Received unexpected status code: 503, response body: busy");
        assertThat(text(call("add", Map.of("a", 2, "b", 3)))).isEqualTo("5");
        assertThat(onlyEventOf("busy").detail()).isEqualTo("answered HTTP 503");
    }

    @Test
    void aResponseClaimingTextHtmlFailsTheCallAndTheSessionGoesOn() throws Exception {
        connect("rules:\n  - name: html\n    match: {kind: response, tool: echo}\n    times: 1\n"
                + "    fault: {type: invalid_content_type, content_type: text/html}\n");
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> call("echo", Map.of("text", "hi")));

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLIENT_TIMEOUT);
        assertThat(failure).isInstanceOf(McpTransportException.class)
                .hasMessage("Unknown media type returned: text/html");
        assertThat(text(call("echo", Map.of("text", "again")))).isEqualTo("again");
        assertThat(onlyEventOf("html").detail()).isEqualTo("content type claimed: text/html");
    }

    @Test
    void anExpiredSessionFailsThatCallAndTheNextCallStartsANewSession() throws Exception {
        // SDK 2.1.0 on a 404 for its session: the call in flight fails ("MCP session with server
        // terminated"), the transport drops the session, and the next call initializes a new one
        // by itself (the spec's "start a new session"), without retrying the failed call.
        connect("rules:\n"
                + "  - name: expire\n    match: {kind: request, tool: add}\n    times: 1\n"
                + "    fault: {type: session_expire}\n"
                + "  - name: see-initialize\n    match: {kind: request, method: initialize}\n"
                + "    fault: {type: latency, latency: 0ms}\n"
                + "  - name: see-echo\n    match: {kind: response, tool: echo}\n"
                + "    fault: {type: latency, latency: 0ms}\n");
        Throwable failure = catchThrowable(() -> call("add", Map.of("a", 1, "b", 2)));

        assertThat(failure).isExactlyInstanceOf(RuntimeException.class)
                .hasMessage("MCP session with server terminated");
        assertThat(text(call("echo", Map.of("text", "new session")))).isEqualTo("new session");
        FaultEvent expired = onlyEventOf("expire");
        assertThat(expired.detail()).isEqualTo("session expired; this request answered 404");
        assertThat(faults).filteredOn(e -> e.rule().equals("see-initialize")).hasSize(2);
        assertThat(onlyEventOf("see-echo").session()).isNotEqualTo(expired.session());
    }

    @Test
    void aDisconnectAtTheRequestFailsTheCallAtOnceWithAnIOException() throws Exception {
        connect("rules:\n  - name: hang-up\n    match: {kind: request, tool: slow}\n    times: 1\n"
                + "    fault: {type: disconnect, side: client}\n");
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> call("slow", Map.of("ms", 100)));

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLIENT_TIMEOUT);
        assertThat(failure).hasCauseInstanceOf(IOException.class);
        assertThat(failure.getCause()).hasMessageContaining("HTTP/1.1 header parser received no bytes");
        // A new connection: the session goes on.
        assertThat(text(call("add", Map.of("a", 1, "b", 2)))).isEqualTo("3");
        assertThat(onlyEventOf("hang-up").detail()).isEqualTo("closed the client's side");
    }

    @Test
    void aDisconnectMidSseStreamLeavesTheCallToTimeOut() throws Exception {
        // The answer to this call comes on an SSE stream: progress notifications, then the
        // result. The proxy closes the connection at the result. The SDK has the progress, but
        // does not fail the call when its stream breaks, nor get the result back by resuming the
        // stream (the demo server would replay it for Last-Event-ID): the call times out.
        connect("rules:\n  - name: hang-up\n    match: {kind: response, tool: slow}\n    times: 1\n"
                + "    fault: {type: disconnect, side: client}\n");
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> client.callTool(McpSchema.CallToolRequest.builder("slow")
                .arguments(Map.of("ms", 100)).progressToken("cut").build()));
        Duration waited = Duration.ofNanos(System.nanoTime() - start);

        assertThat(McpError.findRootCause(failure)).isInstanceOf(TimeoutException.class)
                .hasMessageContaining("within 2000ms");
        assertThat(waited).isGreaterThanOrEqualTo(CLIENT_TIMEOUT);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).isNotEmpty().containsOnly("cut");
        assertThat(onlyEventOf("hang-up").detail()).isEqualTo("closed the client's side");
        assertThat(text(call("add", Map.of("a", 1, "b", 2)))).isEqualTo("3");
    }

    @Test
    void latencyPastTheRequestTimeoutMakesTheCallTimeOut() throws Exception {
        connect("rules:\n  - name: slow-add\n    match: {kind: response, tool: add}\n    times: 1\n"
                + "    fault: {type: latency, latency: 2500ms}\n");
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> call("add", Map.of("a", 1, "b", 2)));
        Duration waited = Duration.ofNanos(System.nanoTime() - start);

        assertThat(McpError.findRootCause(failure)).isInstanceOf(TimeoutException.class)
                .hasMessageContaining("Did not observe any item or terminal signal within 2000ms");
        assertThat(waited).isBetween(CLIENT_TIMEOUT, CLIENT_TIMEOUT.plusSeconds(1));
        assertThat(text(call("add", Map.of("a", 2, "b", 3)))).isEqualTo("5");
        assertThat(onlyEventOf("slow-add").detail()).isEqualTo("held 2500ms");
    }

    @Test
    void anInjectedErrorIsAnMcpErrorWithItsCode() throws Exception {
        connect("rules:\n  - name: overloaded\n    match: {kind: request, tool: add}\n    times: 1\n"
                + "    fault: {type: error, code: -32050, message: injected overload, data: {retryAfter: 5}}\n");
        Throwable failure = catchThrowable(() -> call("add", Map.of("a", 1, "b", 2)));

        assertThat(failure).isInstanceOf(McpError.class).hasMessage("injected overload");
        McpSchema.JSONRPCResponse.JSONRPCError error = ((McpError) failure).getJsonRpcError();
        assertThat(error.code()).isEqualTo(-32050);
        assertThat(error.data()).isEqualTo(Map.of("retryAfter", 5));
        assertThat(text(call("add", Map.of("a", 40, "b", 2)))).isEqualTo("42");
        assertThat(onlyEventOf("overloaded").detail()).isEqualTo("answered with error -32050; not forwarded");
    }

    @Test
    void aToolErrorIsACallToolResultWithIsError() throws Exception {
        connect("rules:\n  - name: quota\n    match: {kind: response, tool: echo}\n    times: 1\n"
                + "    fault: {type: tool_error, text: quota exceeded}\n");
        McpSchema.CallToolResult result = call("echo", Map.of("text", "hello"));

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).isEqualTo("quota exceeded");
        assertThat(text(call("echo", Map.of("text", "hello")))).isEqualTo("hello");
        assertThat(onlyEventOf("quota").fault()).isEqualTo("tool_error");
    }
}
