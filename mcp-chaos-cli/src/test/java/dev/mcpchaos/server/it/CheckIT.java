package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.check.CassetteCheck;
import dev.mcpchaos.server.check.CheckReports;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.check.Severity;
import dev.mcpchaos.server.cli.Main;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The referee on real peers: server-everything and the built-in demo server, talked to by the MCP
 * Java SDK through a checking proxy: the demo server breaks no check, server-everything exactly
 * one (asserted here, documented in docs/checks.md). Through the command line too:
 * {@code mcp-chaos stdio --check --check-report --record} in front of the demo server, then
 * {@code mcp-chaos check} on that cassette, which must report what the live run reported.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CheckIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** initialize, tools/list, a good call, a call with bad arguments, a call of an unknown tool. */
    private static void converse(McpSyncClient client, String tool, Map<String, Object> args) {
        client.initialize();
        List<McpSchema.Tool> tools = client.listTools().tools();
        assertThat(tools).extracting(McpSchema.Tool::name).contains(tool);
        assertThat(client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(args).build()).isError())
                .isNotEqualTo(Boolean.TRUE);
        try {
            client.callTool(McpSchema.CallToolRequest.builder("no-such-tool").build());
        } catch (McpError e) {
            // the answer the check wants: a protocol error
        }
        client.ping();
    }

    private static Referee.Report inProcess(List<String> server, String tool, Map<String, Object> args) {
        Referee referee = new Referee();
        List<String> stderr = new CopyOnWriteArrayList<>();
        try (InProcessStdioProxy proxy = InProcessStdioProxy.start(server, RuleSet.of("none", List.of()), 1L, referee)) {
            McpSyncClient client = proxy.sdkClient(TIMEOUT, stderr).build();
            try {
                converse(client, tool, args);
                await().atMost(TIMEOUT).until(() -> referee.report().messages() >= 10);
            } finally {
                client.closeGracefully();
            }
        }
        Referee.Report report = referee.report();
        System.err.print(CheckReports.summary(report));
        return report;
    }

    /**
     * server-everything (2.0.0, on the TypeScript SDK) answers a call of an unknown tool with a
     * result ({@code isError: true}, "MCP error -32602: Tool no-such-tool not found") where the
     * spec lists unknown tools among the protocol errors. That is the one check it breaks; looked
     * at twice and documented in docs/checks.md. Everything else it does is clean.
     */
    @Test
    void serverEverythingBreaksOnlyTheUnknownToolCheck() {
        Referee.Report report = inProcess(TestPeers.serverEverythingStdioCommand(), "echo", Map.of("message", "hi"));
        assertThat(report.firedIds()).as(report.all().toString()).containsExactly("tools.unknown-tool-result");
        assertThat(report.count(dev.mcpchaos.server.check.Check.UNKNOWN_TOOL_RESULT)).isEqualTo(1);
        assertThat(report.violations().get(dev.mcpchaos.server.check.Check.UNKNOWN_TOOL_RESULT).get(0).excerpt())
                .contains("\"isError\":true").contains("no-such-tool");
        assertThat(report.messages()).isGreaterThanOrEqualTo(10);
    }

    @Test
    void theDemoServerBreaksNoCheck() {
        List<String> demo = List.of(TestPeers.java().toString(), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "demo-server");
        Referee.Report report = inProcess(demo, "echo", Map.of("text", "hi"));
        assertThat(report.firedIds()).as(report.all().toString()).isEmpty();
    }

    @Test
    void theCommandLineChecksLiveAndTheCassetteSaysTheSame() throws Exception {
        Path live = dir.resolve("live.json");
        Path junit = dir.resolve("live.xml");
        Path cassette = dir.resolve("demo.ndjson");
        String java = TestPeers.java().toString();
        String jar = TestPeers.mcpChaosJar().toString();
        List<String> stderr = new CopyOnWriteArrayList<>();
        McpSyncClient client = TestPeers.stdioClient(List.of(java, "-jar", jar, "stdio", "--check", "--check-report",
                live.toString(), "--check-junit", junit.toString(), "--record", cassette.toString(), "--", java, "-jar",
                jar, "demo-server"), stderr::add).build();
        try {
            converse(client, "echo", Map.of("text", "hi"));
        } finally {
            client.closeGracefully();
        }
        await().atMost(TIMEOUT).until(() -> Files.exists(live) && Files.exists(junit));
        ObjectMapper json = new ObjectMapper();
        JsonNode liveReport = json.readTree(live.toFile());
        assertThat(liveReport.get("errors").asLong()).as(stderr.toString()).isZero();
        assertThat(liveReport.get("messages").asLong()).isGreaterThanOrEqualTo(10);

        Path offline = dir.resolve("offline.json");
        StringWriter out = new StringWriter();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", cassette.toString(), "--check-report",
                offline.toString())).isZero();
        JsonNode offlineReport = json.readTree(offline.toFile());
        assertThat(counts(offlineReport)).isEqualTo(counts(liveReport));
        assertThat(offlineReport.get("messages")).isEqualTo(liveReport.get("messages"));

        Referee again = new Referee();
        CassetteCheck.feed(again, cassette);
        assertThat(again.report().failsAt(Severity.WARNING)).isFalse();
    }

    private static Referee.Report overHttp(java.net.URI upstream, String tool, Map<String, Object> args) {
        Referee referee = new Referee();
        try (dev.mcpchaos.server.HttpProxyBuilder.RunningHttp proxy = dev.mcpchaos.server.McpChaosProxy.http(upstream)
                .listen(new java.net.InetSocketAddress("127.0.0.1", 0)).check(referee).start()) {
            McpSyncClient client = HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address())).build();
            try {
                converse(client, tool, args);
                await().atMost(TIMEOUT).until(() -> referee.report().messages() >= 10);
            } finally {
                client.closeGracefully();
            }
        }
        Referee.Report report = referee.report();
        System.err.print(CheckReports.summary(report));
        return report;
    }

    @Test
    void overHttpTheDemoServerBreaksNothingAndServerEverythingTheSameOneCheck() throws Exception {
        try (dev.mcpchaos.server.host.McpHttpHost demo = dev.mcpchaos.server.demo.DemoHttpServer.start(
                new java.net.InetSocketAddress("127.0.0.1", 0))) {
            Referee.Report report = overHttp(demo.endpoint(), "echo", Map.of("text", "hi"));
            assertThat(report.firedIds()).as(report.all().toString()).isEmpty();
            assertThat(report.messages()).isGreaterThanOrEqualTo(10);
        }
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(dir)) {
            Referee.Report report = overHttp(everything.endpoint(), "echo", Map.of("message", "hi"));
            assertThat(report.firedIds()).as(report.all().toString()).containsExactly("tools.unknown-tool-result");
        }
    }

    private static List<String> counts(JsonNode report) {
        List<String> counts = new ArrayList<>();
        report.get("checks").forEach(c -> counts.add(c.get("id").asText() + "=" + c.get("count").asLong()));
        return counts;
    }
}
