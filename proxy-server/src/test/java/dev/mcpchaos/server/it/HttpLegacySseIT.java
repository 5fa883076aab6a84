package dev.mcpchaos.server.it;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The legacy HTTP+SSE transport ({@code GET /sse} for the server's messages, {@code POST
 * /message?sessionId=...} for the client's) of the real server-everything in {@code sse} mode,
 * through the proxy. Its responses come on the GET stream with an id and no method, so the proxy
 * must correlate them with the requests POSTed to {@code /message} for {@code kind: response} and
 * {@code tool:} rules to match: the session is learnt from the stream's {@code endpoint} event.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpLegacySseIT {

    @TempDir
    static Path tempDir;
    private static HttpPeers.ServerEverything server;

    private HttpProxyBuilder.RunningHttp proxy;
    private final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final BlockingQueue<String> streamLines = new LinkedBlockingQueue<>();
    private Stream<String> stream;

    @BeforeAll
    static void startServer() {
        server = HttpPeers.ServerEverything.start(tempDir, "sse", "Server is running on port ");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void stop() {
        if (stream != null) {
            stream.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    private void startProxy(String yaml) throws Exception {
        proxy = McpChaosProxy.http(URI.create("http://127.0.0.1:" + server.port() + "/sse"))
                .rules(RuleSet.parse(yaml, "legacy.yaml"))
                .seed(5)
                .faultListener(faults::add)
                .start();
    }

    private URI proxied(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + proxy.address().getPort() + pathAndQuery);
    }

    /** Opens {@code GET /sse} and returns the path the endpoint event names. */
    private String openStream() throws Exception {
        HttpResponse<Stream<String>> response = client.send(HttpRequest.newBuilder(proxied("/sse"))
                .header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(response.statusCode()).isEqualTo(200);
        stream = response.body();
        Thread reader = new Thread(() -> {
            try {
                stream.forEach(streamLines::add);
            } catch (RuntimeException e) {
                // the test closed the stream
            }
        }, "legacy-sse-reader");
        reader.setDaemon(true);
        reader.start();
        String endpoint = nextData("endpoint");
        assertThat(endpoint).startsWith("/message?sessionId=");
        return endpoint;
    }

    /** The data of the next event of {@code type} on the stream. */
    private String nextData(String type) throws InterruptedException {
        String eventType = "message";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            String line = streamLines.poll(100, TimeUnit.MILLISECONDS);
            if (line == null) {
                continue;
            }
            if (line.startsWith("event:")) {
                eventType = line.substring(6).trim();
            } else if (line.startsWith("data:") && eventType.equals(type)) {
                return line.substring(5).trim();
            } else if (line.isEmpty()) {
                eventType = "message";
            }
        }
        throw new AssertionError("no " + type + " event within 20 s");
    }

    /** The data of the next message event whose JSON-RPC id is {@code id}. */
    private String answerTo(int id) throws InterruptedException {
        while (true) {
            String data = nextData("message");
            if (data.contains("\"id\":" + id + ",") || data.contains("\"id\":" + id + "}")) {
                return data;
            }
        }
    }

    private void post(String endpoint, String body) throws Exception {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(proxied(endpoint))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(202);
    }

    private String initialize() throws Exception {
        String endpoint = openStream();
        post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"legacy\",\"version\":\"1\"}}}");
        assertThat(answerTo(1)).contains("\"result\"");
        post(endpoint, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        return endpoint;
    }

    private static String echo(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"message\":\"" + text + "\"}}}";
    }

    @Test
    void withoutRulesAnEchoCallIsAnsweredOnTheStream() throws Exception {
        startProxy("rules: []\n");
        String endpoint = initialize();
        post(endpoint, echo(2, "hello"));
        assertThat(answerTo(2)).contains("\"result\"").contains("hello");
        assertThat(faults).isEmpty();
    }

    @Test
    void aRuleOnResponsesOfOneToolMatchesTheAnswersOnTheStream() throws Exception {
        startProxy("rules:\n"
                + "  - name: echo-breaks\n"
                + "    match: {tool: echo, kind: response}\n"
                + "    fault: {type: error, code: -32603, message: legacy echo is down}\n");
        String endpoint = initialize();
        post(endpoint, echo(2, "hello"));
        String answer = answerTo(2);
        assertThat(answer).contains("-32603").contains("legacy echo is down").doesNotContain("hello");
        assertThat(faults).singleElement().satisfies(event -> {
            assertThat(event.tool()).isEqualTo("echo");
            assertThat(event.method()).isEqualTo("tools/call");
            assertThat(event.session()).isEqualTo(endpoint.substring(endpoint.indexOf('=') + 1));
        });
        // Other tools' answers pass.
        post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
        assertThat(answerTo(3)).contains("\"tools\"");
        assertThat(faults).hasSize(1);
    }
}
