package dev.mcpchaos.server.metrics;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SSE streams through the HTTP proxy with metrics on and no rules: the events are relayed as they
 * come and only observed, and every message is still counted exactly once, wherever the upstream's
 * writes split the stream; a rule that appears mid-stream acts from the next event on.
 */
@Timeout(120)
class SseMetricsTest {

    private static final String PROGRESS = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\n"
            + "\"params\":{\"progress\":1}}";
    private static final String MESSAGE = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\"}}";
    private static final String RESPONSE = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
    private static final String MALFORMED = "{not json";
    private static final String CUSTOM = "{\"jsonrpc\":\"2.0\",\"method\":\"custom/thing\"}";

    /**
     * Every kind of event a stream may carry: comments, the priming event, several data lines,
     * CRLF and bare CR line ends, an event of another type, a response, malformed data.
     */
    private static final String STREAM = ": open\n\n"
            + "id: 1\ndata:\n\n"
            + "event: message\ndata: " + MESSAGE + "\n\n"
            + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\ndata: \"params\":{\"progress\":1}}\r\n\r\n"
            + "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n\n"
            + "data: " + RESPONSE + "\n\n"
            + "retry: 1000\ndata: " + MALFORMED + "\n\n"
            + "data: " + CUSTOM + "\r\r";
    private static final byte[] STREAM_BYTES = STREAM.getBytes(StandardCharsets.UTF_8);

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private ServerSocket upstream;
    private Thread upstreamThread;
    /** How the upstream writes its body: the first write's length, and what the second waits for. */
    private volatile int split;
    private volatile byte[] body = STREAM_BYTES;
    private volatile CountDownLatch secondWrite = new CountDownLatch(0);

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        upstreamThread = new Thread(this::serve, "sse-upstream");
        upstreamThread.setDaemon(true);
        upstreamThread.start();
    }

    @AfterEach
    void stopUpstream() throws Exception {
        upstream.close();
        upstreamThread.join(5000);
    }

    /** Answers each GET with the body in two writes, split at {@link #split}, a pause between them. */
    private void serve() {
        while (!upstream.isClosed()) {
            try (Socket socket = upstream.accept()) {
                socket.setTcpNoDelay(true);
                readHead(socket.getInputStream());
                byte[] bytes = body;
                OutputStream out = socket.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + bytes.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes, 0, split);
                out.flush();
                // Apart, so that the proxy reads the two parts separately (it almost always does).
                Thread.sleep(3);
                if (!secondWrite.await(30, TimeUnit.SECONDS)) {
                    return;
                }
                out.write(bytes, split, bytes.length - split);
                out.flush();
                socket.shutdownOutput();
                socket.getInputStream().readAllBytes(); // until the proxy closes its side
            } catch (IOException | InterruptedException e) {
                // closed: the test is over
            }
        }
    }

    private static void readHead(InputStream in) throws IOException {
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the request ended inside its head");
            }
            matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
    }

    @Test
    void everyMessageIsCountedOnceWhereverTheStreamIsSplit() throws Exception {
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstreamUri()).metrics(registry).start()) {
            int streams = 0;
            for (int at = 0; at <= STREAM_BYTES.length; at++) {
                split = at;
                HttpResponse<byte[]> response = client.send(get(proxy), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(new String(response.body(), StandardCharsets.UTF_8)).as("split at %d", at).isEqualTo(STREAM);
                streams++;
            }
            assertThat(messages("notification", "notifications/message")).isEqualTo(streams);
            assertThat(messages("notification", "notifications/progress")).isEqualTo(streams);
            assertThat(messages("notification", "other")).as("custom/thing").isEqualTo(streams);
            assertThat(messages("response", "none")).isEqualTo(streams);
            assertThat(messages("malformed", "none")).isEqualTo(streams);
            assertThat(registry.find(ProxyMetrics.MESSAGES).counters()).as("nothing else: comments, priming, ping type")
                    .hasSize(5);
            assertThat(counter(ProxyMetrics.PARSE_ERRORS)).isEqualTo(streams);
            long bytesPerStream = MESSAGE.length() + PROGRESS.length() + RESPONSE.length() + MALFORMED.length()
                    + CUSTOM.length();
            assertThat(counter(ProxyMetrics.BYTES)).isEqualTo((double) bytesPerStream * streams);
        }
    }

    @Test
    void aRuleAddedMidStreamActsFromTheNextEventAndCountsStayExact() throws Exception {
        String first = "event: message\ndata: " + MESSAGE + "\n\n";
        String straddling = "data: " + MESSAGE + "\n\n";
        String after = "data: " + PROGRESS.replace("\n", "") + "\n\n" + "data: " + MESSAGE + "\n\n";
        body = (first + straddling + after).getBytes(StandardCharsets.UTF_8);
        split = first.length() + 10; // inside the second event
        secondWrite = new CountDownLatch(1);
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstreamUri()).metrics(registry).start()) {
            HttpResponse<InputStream> response = client.send(get(proxy), HttpResponse.BodyHandlers.ofInputStream());
            InputStream in = response.body();
            byte[] head = in.readNBytes(split);
            assertThat(new String(head, StandardCharsets.UTF_8)).as("relayed as it came")
                    .isEqualTo((first + straddling).substring(0, split));
            proxy.rules().replace(RuleSet.parse("rules:\n"
                    + "  - name: no-messages\n"
                    + "    match: {direction: server_to_client, method: notifications/message}\n"
                    + "    fault: {type: drop}\n", "rules.yaml"), "test");
            secondWrite.countDown();
            ByteArrayOutputStream rest = new ByteArrayOutputStream();
            in.transferTo(rest);
            assertThat(rest.toString(StandardCharsets.UTF_8))
                    .as("the event in progress passes; the rule drops the next message event")
                    .isEqualTo((straddling).substring(split - first.length()) + "data: "
                            + PROGRESS.replace("\n", "") + "\n\n");
            // The metrics come first in the chain: they count what arrived, dropped or not.
            assertThat(messages("notification", "notifications/message")).isEqualTo(3);
            assertThat(messages("notification", "notifications/progress")).isEqualTo(1);
            assertThat(proxy.rules().stats().get(0).injected()).isEqualTo(1);
        }
    }

    private URI upstreamUri() {
        return URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp");
    }

    private static HttpRequest get(HttpProxyBuilder.RunningHttp proxy) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp"))
                .header("Accept", "text/event-stream").timeout(Duration.ofSeconds(30)).GET().build();
    }

    private double messages(String kind, String method) {
        Counter counter = registry.find(ProxyMetrics.MESSAGES).tags("transport", "http",
                "direction", "server_to_client", "kind", kind, "method", method).counter();
        return counter == null ? 0 : counter.count();
    }

    private double counter(String name) {
        Counter counter = registry.find(name).tags("transport", "http", "direction", "server_to_client").counter();
        return counter == null ? 0 : counter.count();
    }
}
