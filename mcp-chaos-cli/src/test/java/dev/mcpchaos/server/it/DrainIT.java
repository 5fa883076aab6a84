package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM to {@code mcp-chaos http} (the packaged jar as a child process, in front of the built-in
 * demo server, another child process): the graceful drain as a client sees it. New connections
 * are refused and the operations listener's {@code /ready} turns 503 at once; an idle keep-alive
 * connection is closed at once; an SSE stream still open at the drain's deadline gets the final
 * comment and a clean end of its chunked body; a stream that finishes within the deadline
 * arrives whole, and an answer sent during the drain says {@code Connection: close}. The process
 * exits 0, after the deadline and not long after it, and logs and writes events for the drain.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DrainIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern DEMO_ENDPOINT = Pattern.compile("(http://127\\.0\\.0\\.1:\\d+/mcp)");
    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern OPERATIONS = Pattern.compile("operations listener on http://127\\.0\\.0\\.1:(\\d+)/");
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"drain\",\"version\":\"1\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @TempDir
    Path tempDir;

    private final List<Process> processes = new ArrayList<>();
    private final List<RawHttp> connections = new ArrayList<>();
    private String upstream;

    @BeforeEach
    void startDemoServer() {
        Path stderr = tempDir.resolve("demo.stderr");
        Process demo = start(stderr, "demo-server", "--http", "127.0.0.1:0", "--keep-alive", "10m");
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> !demo.isAlive() || DEMO_ENDPOINT.matcher(read(stderr)).find());
        Matcher endpoint = DEMO_ENDPOINT.matcher(read(stderr));
        assertThat(endpoint.find()).as("the demo server's endpoint; stderr:%n%s", read(stderr)).isTrue();
        upstream = endpoint.group(1);
    }

    @AfterEach
    void stop() throws InterruptedException {
        connections.forEach(RawHttp::close);
        for (Process process : processes) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anSseStreamOpenAtTheDeadlineEndsWithAFinalCommentAndACleanEndAndTheProcessExitsZero() throws Exception {
        Proxy proxy = startProxy("2s");
        assertThat(proxy.ready().status).isEqualTo(200);
        String session = initialize(proxy.port);

        // The session's GET stream: open until the proxy ends it.
        RawHttp stream = connect(proxy.port);
        stream.request("GET", "/mcp", List.of("Accept: text/event-stream", "Mcp-Session-Id: " + session), null);
        RawHttp.Response streaming = stream.readHead();
        assertThat(streaming.status).isEqualTo(200);
        assertThat(streaming.header("Transfer-Encoding")).isEqualToIgnoringCase("chunked");

        // An idle keep-alive connection: closed as soon as the drain begins, not at its deadline.
        RawHttp idle = connect(proxy.port);
        idle.post("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", "Mcp-Session-Id: " + session);
        RawHttp.Response pong = idle.readResponse();
        assertThat(pong.status).isEqualTo(200);
        assertThat(pong.bodyText()).contains("\"id\":2");

        long sent = System.nanoTime();
        proxy.process.destroy(); // SIGTERM

        await().atMost(Duration.ofSeconds(5)).until(() -> proxy.ready().status == 503);
        assertThat(proxy.ready().bodyText()).startsWith("not ready: draining");
        idle.readTimeout(Duration.ofSeconds(5));
        assertThat(idle.awaitClosedByPeer()).as("the idle connection is closed when the drain begins").isTrue();
        assertThat(elapsed(sent)).isLessThan(Duration.ofSeconds(2));
        assertThatThrownBy(() -> new Socket("127.0.0.1", proxy.port).close())
                .as("no new connection is taken").isInstanceOf(ConnectException.class);

        // At the deadline: the final comment, then the end of the chunked body (ChunkedInput throws without it).
        stream.readTimeout(Duration.ofSeconds(20));
        String event = streaming.nextEvent();
        assertThat(event).isEqualTo(": mcp-chaos: the proxy is shutting down; reconnect to carry on\n\n");
        assertThat(streaming.nextEvent()).as("the body ends cleanly after the comment").isNull();
        assertThat(stream.awaitClosedByPeer()).isTrue();

        assertThat(proxy.process.waitFor(20, TimeUnit.SECONDS)).as("the proxy exits").isTrue();
        Duration took = elapsed(sent);
        assertThat(proxy.process.exitValue()).isZero();
        assertThat(took).as("it waited the drain timeout, and not much longer")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(2)).isLessThan(Duration.ofSeconds(12));
        String log = read(proxy.stderr);
        assertThat(log).contains("draining: no new connections; 1 exchange(s) in flight get up to 2000 ms to finish")
                .containsPattern("drained in \\d+ ms: of 1 exchange\\(s\\) in flight, 0 finished, 1 SSE stream\\(s\\) "
                        + "ended with a final comment, 0 answered 503, 0 cut; 1 idle connection\\(s\\) closed")
                .doesNotContain("LEAK:");
        String events = read(proxy.events);
        assertThat(events).containsPattern("\"event\":\"drain_started\",\"in_flight\":1,\"timeout_ms\":2000")
                .containsPattern("\"event\":\"drain_ended\",\"in_flight\":1,\"finished\":0,\"ended\":1,\"answered\":0,"
                        + "\"cut\":0,\"idle_closed\":1,\"took_ms\":\\d+");
    }

    @Test
    void aStreamThatFinishesWithinTheDeadlineArrivesWholeAndAnswersDuringTheDrainSayConnectionClose()
            throws Exception {
        Proxy proxy = startProxy("20s");
        String session = initialize(proxy.port);

        // A tools/call of slow with progress: an SSE response of 5 progress events and the result, over 1.5 s.
        RawHttp progress = connect(proxy.port);
        progress.post("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                + "\"arguments\":{\"ms\":1500},\"_meta\":{\"progressToken\":\"p\"}}}", "Mcp-Session-Id: " + session);
        RawHttp.Response streaming = progress.readHead();
        assertThat(streaming.status).isEqualTo(200);
        assertThat(streaming.header("Content-Type")).startsWith("text/event-stream");
        // A JSON answer that comes only after the drain began: it must say the connection closes.
        RawHttp json = connect(proxy.port);
        json.post("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                + "\"arguments\":{\"ms\":1000}}}", "Mcp-Session-Id: " + session);
        Thread.sleep(200); // both requests reached the proxy; neither is answered yet

        long sent = System.nanoTime();
        proxy.process.destroy(); // SIGTERM
        await().atMost(Duration.ofSeconds(5)).until(() -> proxy.ready().status == 503);

        progress.readTimeout(Duration.ofSeconds(20));
        List<String> events = new ArrayList<>();
        for (String event = streaming.nextEvent(); event != null; event = streaming.nextEvent()) {
            events.add(event);
        }
        assertThat(events).as("every progress event, then the result, then a clean end").hasSize(6);
        assertThat(events.subList(0, 5)).allMatch(e -> e.contains("notifications/progress"));
        assertThat(events.get(5)).contains("\"id\":10").contains("slept 1500 ms").doesNotContain("shutting down");

        json.readTimeout(Duration.ofSeconds(20));
        RawHttp.Response answer = json.readResponse();
        assertThat(answer.status).isEqualTo(200);
        assertThat(answer.header("Connection")).isEqualToIgnoringCase("close");
        assertThat(answer.bodyText()).contains("\"id\":11").contains("slept 1000 ms");
        assertThat(json.awaitClosedByPeer()).isTrue();

        assertThat(proxy.process.waitFor(20, TimeUnit.SECONDS)).as("the proxy exits").isTrue();
        assertThat(proxy.process.exitValue()).isZero();
        assertThat(elapsed(sent)).as("it exits once what was in flight finished, well before the 20 s deadline")
                .isLessThan(Duration.ofSeconds(12));
        assertThat(read(proxy.stderr)).containsPattern("of 2 exchange\\(s\\) in flight, 2 finished, 0 SSE stream\\(s\\) "
                + "ended with a final comment, 0 answered 503, 0 cut").doesNotContain("LEAK:");
        assertThat(read(proxy.events)).contains("\"event\":\"drain_ended\",\"in_flight\":2,\"finished\":2,\"ended\":0");
    }

    /** A running proxy: its process, its data port, its operations listener's port and its files. */
    private record Proxy(Process process, int port, int operationsPort, Path stderr, Path events) {
        RawHttp.Response ready() throws IOException {
            try (RawHttp ops = RawHttp.connect(operationsPort)) {
                ops.request("GET", "/ready", List.of(), null);
                RawHttp.Response response = ops.readResponse();
                response.readBody();
                return response;
            }
        }
    }

    private Proxy startProxy(String drainTimeout) {
        Path stderr = tempDir.resolve("proxy-" + drainTimeout + ".stderr");
        Path events = tempDir.resolve("events-" + drainTimeout + ".jsonl");
        Process process = start(stderr, "http", "--listen", "127.0.0.1:0", "--upstream", upstream, "--control", "off",
                "--metrics-listen", "127.0.0.1:0", "--drain-timeout", drainTimeout, "--events", events.toString(),
                "--quiet");
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).until(() -> !process.isAlive()
                || LISTENING.matcher(read(stderr)).find() && OPERATIONS.matcher(read(stderr)).find());
        assertThat(process.isAlive()).as("the proxy runs; stderr:%n%s", read(stderr)).isTrue();
        Matcher listening = LISTENING.matcher(read(stderr));
        Matcher operations = OPERATIONS.matcher(read(stderr));
        assertThat(listening.find() && operations.find()).isTrue();
        return new Proxy(process, Integer.parseInt(listening.group(1)), Integer.parseInt(operations.group(1)), stderr,
                events);
    }

    /** Initializes a session through the proxy on a connection of its own; returns its id. */
    private String initialize(int port) throws IOException {
        try (RawHttp connection = RawHttp.connect(port)) {
            connection.post("/mcp", INITIALIZE);
            RawHttp.Response init = connection.readResponse();
            assertThat(init.status).isEqualTo(200);
            assertThat(init.bodyText()).contains("\"protocolVersion\"");
            String session = init.header("Mcp-Session-Id");
            assertThat(session).isNotNull();
            connection.post("/mcp", INITIALIZED, "Mcp-Session-Id: " + session);
            RawHttp.Response accepted = connection.readResponse();
            assertThat(accepted.status).isEqualTo(202);
            accepted.readBody();
            return session;
        }
    }

    private RawHttp connect(int port) {
        RawHttp connection = RawHttp.connect(port);
        connections.add(connection);
        return connection;
    }

    private Process start(Path stderr, String... args) {
        List<String> command = new ArrayList<>(List.of(TestPeers.java().toString(),
                "-Dio.netty.leakDetection.level=paranoid", "-jar", TestPeers.mcpChaosJar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(tempDir.resolve(args[0] + ".stdout").toFile())
                .redirectError(stderr.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("MCP_CHAOS_") || name.endsWith("JAVA_OPTIONS")
                || name.equals("JAVA_TOOL_OPTIONS"));
        try {
            Process process = builder.start();
            processes.add(process);
            return process;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Duration elapsed(long since) {
        return Duration.ofNanos(System.nanoTime() - since);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
