package dev.mcpchaos.server.metrics;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stdio proxy in front of the demo server, with one rule, driven by a fixed script of raw
 * JSON-RPC lines: the scraped counts are exact.
 */
@Timeout(120)
class StdioMetricsTest {

    private static final int MAX_LINE = 4096;
    private static final String RULES = "rules:\n"
            + "  - name: add-fails\n"
            + "    match: {direction: client_to_server, kind: request, method: tools/call, tool: add}\n"
            + "    times: 2\n"
            + "    fault: {type: error, code: -32050, message: injected}\n";

    private static final String S = "{\"jsonrpc\":\"2.0\",";
    private static final String ADD = "\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}";
    /** The script; each line is followed by \n. Blank and oversized lines are not messages. */
    private static final List<String> SCRIPT = List.of(
            S + "\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"metrics-test\",\"version\":\"1\"}}}",
            S + "\"method\":\"notifications/initialized\"}",
            S + "\"id\":2,\"method\":\"tools/list\"}",
            S + "\"id\":3," + ADD, // error injected
            S + "\"id\":4," + ADD, // error injected
            S + "\"id\":5," + ADD, // reaches the server
            S + "\"id\":6,\"method\":\"ping\"}",
            S + "\"id\":7,\"method\":\"x-vendor/unknown\"}", // method tag: other; the server answers -32601
            "",
            "{not json",                                     // the server answers -32700, id null
            S + "\"id\":8,\"method\":\"ping\",\"params\":{\"pad\":\"" + "x".repeat(MAX_LINE) + "\"}}"); // over the limit
    private static final int ANSWERS = 8; // ids 1..7, and the parse error

    private final Pipe clientPipe = open();
    private final OutputStream client = Channels.newOutputStream(clientPipe.sink());
    private final Pipe outPipe = open();
    private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
    private McpChaosProxy.Running proxy;

    @AfterEach
    void tearDown() throws IOException {
        client.close();
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    void scrapedCountsAreExactAfterAKnownScriptAndRules() throws Exception {
        proxy = McpChaosProxy.stdio(List.of(ProcessHandle.current().info().command().orElse("java"),
                        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath(), DemoServer.class.getName()))
                .clientInput(Channels.newInputStream(clientPipe.source()))
                .clientOutput(Channels.newOutputStream(outPipe.sink()))
                .serverErrorOutput(OutputStream.nullOutputStream())
                .maxLineLength(MAX_LINE)
                .exitTimeout(Duration.ofSeconds(5))
                .terminateTimeout(Duration.ofSeconds(2))
                .rules(RuleSet.parse(RULES, "rules.yaml"))
                .seed(1)
                .control(new InetSocketAddress("127.0.0.1", 0))
                .start();
        readClientOutput(Channels.newInputStream(outPipe.source()));
        InetSocketAddress control = proxy.controlAddress();
        assertThat(control).isNotNull();

        Scrape before = Scrape.metrics(control);
        assertThat(before.value("mcp_chaos_sessions_active{transport=\"stdio\"}")).isEqualTo(1.0);

        long c2sBytes = 0;
        for (String line : SCRIPT) {
            client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            if (!line.isBlank() && line.length() <= MAX_LINE) {
                c2sBytes += line.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        client.flush();
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < ANSWERS; i++) {
            String line = received.poll(60, TimeUnit.SECONDS);
            assertThat(line).as("answer %d of %d; so far %s", i + 1, ANSWERS, answers).isNotNull();
            answers.add(line);
        }
        // Two of the answers are the proxy's injected errors: they never reach the metrics, which count
        // messages as they arrived. The other six came from the server.
        long s2cBytes = answers.stream().filter(a -> !a.contains("injected"))
                .mapToLong(a -> a.getBytes(StandardCharsets.UTF_8).length).sum();
        assertThat(answers).filteredOn(a -> a.contains("injected")).hasSize(2);

        Scrape m = Scrape.metrics(control);
        assertThat(m.status).isEqualTo(200);
        assertThat(m.contentType).startsWith("text/plain; version=0.0.4");

        String c2s = "mcp_chaos_messages_total{direction=\"client_to_server\",kind=\"%s\",method=\"%s\",transport=\"stdio\"}";
        assertThat(m.value(c2s.formatted("request", "initialize"))).isEqualTo(1.0);
        assertThat(m.value(c2s.formatted("notification", "notifications/initialized"))).isEqualTo(1.0);
        assertThat(m.value(c2s.formatted("request", "tools/list"))).isEqualTo(1.0);
        assertThat(m.value(c2s.formatted("request", "tools/call"))).isEqualTo(3.0);
        assertThat(m.value(c2s.formatted("request", "ping"))).isEqualTo(1.0);
        assertThat(m.value(c2s.formatted("request", "other"))).isEqualTo(1.0);
        assertThat(m.value(c2s.formatted("malformed", "none"))).isEqualTo(1.0);
        String s2c = "mcp_chaos_messages_total{direction=\"server_to_client\",kind=\"%s\",method=\"%s\",transport=\"stdio\"}";
        assertThat(m.value(s2c.formatted("response", "initialize"))).isEqualTo(1.0);
        assertThat(m.value(s2c.formatted("response", "tools/list"))).isEqualTo(1.0);
        assertThat(m.value(s2c.formatted("response", "tools/call"))).isEqualTo(1.0);
        assertThat(m.value(s2c.formatted("response", "ping"))).isEqualTo(1.0);
        assertThat(m.value(s2c.formatted("error", "other"))).isEqualTo(1.0);
        assertThat(m.value(s2c.formatted("error", "none"))).isEqualTo(1.0);
        assertThat(m.family("mcp_chaos_messages_total{").lines().count())
                .as(m.family("mcp_chaos_messages_total")).isEqualTo(13);

        assertThat(m.value("mcp_chaos_bytes_total{direction=\"client_to_server\",transport=\"stdio\"}"))
                .isEqualTo((double) c2sBytes);
        assertThat(m.value("mcp_chaos_bytes_total{direction=\"server_to_client\",transport=\"stdio\"}"))
                .isEqualTo((double) s2cBytes);
        assertThat(m.value("mcp_chaos_faults_injected_total{fault=\"error\",rule=\"add-fails\"}")).isEqualTo(2.0);
        assertThat(m.value("mcp_chaos_parse_errors_total{direction=\"client_to_server\",reason=\"malformed_json\","
                + "transport=\"stdio\"}")).isEqualTo(1.0);
        assertThat(m.value("mcp_chaos_limit_breaches_total{limit=\"line_length\",transport=\"stdio\"}")).isEqualTo(1.0);

        String duration = "mcp_chaos_request_duration_seconds_count{method=\"%s\",transport=\"stdio\"}";
        assertThat(m.value(duration.formatted("initialize"))).isEqualTo(1.0);
        assertThat(m.value(duration.formatted("tools/list"))).isEqualTo(1.0);
        assertThat(m.value(duration.formatted("tools/call"))).isEqualTo(1.0); // the two injected errors are not timed
        assertThat(m.value(duration.formatted("ping"))).isEqualTo(1.0);
        assertThat(m.value(duration.formatted("other"))).isEqualTo(1.0);
        assertThat(m.body).contains("mcp_chaos_request_duration_seconds_bucket{method=\"ping\",transport=\"stdio\",le=");
        assertThat(m.value("mcp_chaos_sessions_active{transport=\"stdio\"}")).isEqualTo(1.0);
        assertThat(m.body).contains("jvm_memory_used_bytes", "jvm_threads_live_threads", "netty_allocator_memory_used");

        client.close(); // the input ends: the proxy shuts the server down
        assertThat(proxy.exitCode().get(30, TimeUnit.SECONDS)).isZero();
        Scrape after = Scrape.metrics(control);
        assertThat(after.value("mcp_chaos_sessions_active{transport=\"stdio\"}")).isEqualTo(0.0);
        assertThat(after.value(c2s.formatted("request", "tools/call"))).isEqualTo(3.0);
    }

    @Test
    void healthIsOkAndOtherPathsAreNotFound() throws Exception {
        proxy = McpChaosProxy.stdio(List.of(ProcessHandle.current().info().command().orElse("java"),
                        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath(), DemoServer.class.getName()))
                .clientInput(Channels.newInputStream(clientPipe.source()))
                .clientOutput(Channels.newOutputStream(outPipe.sink()))
                .serverErrorOutput(OutputStream.nullOutputStream())
                .control(new InetSocketAddress("127.0.0.1", 0))
                .start();
        HttpResponse<String> health = Scrape.get(proxy.controlAddress(), "/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("ok");
        assertThat(Scrape.get(proxy.controlAddress(), "/nothing").statusCode()).isEqualTo(404);
        assertThat(Scrape.get(proxy.controlAddress(), "/metrics/x").statusCode()).isEqualTo(404);
        client.close();
        assertThat(proxy.exitCode().get(30, TimeUnit.SECONDS)).isNotNull();
    }

    private void readClientOutput(InputStream in) {
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    received.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        }, "client-output");
        reader.setDaemon(true);
        reader.start();
    }

    private static Pipe open() {
        try {
            return Pipe.open();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }
}
