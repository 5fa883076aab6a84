package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.replay.HttpReplay;
import dev.mcpchaos.server.replay.OnExhausted;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The 2026-07-28 revision, sessionless, between the TypeScript SDK 2.4's own peers
 * ({@code @modelcontextprotocol/client} pinned to 2026-07-28 and {@code @modelcontextprotocol/server}
 * behind its {@code createMcpHandler}; scripts in {@code test-peers/ts-sdk/}), directly and through
 * an in-process mcp-chaos HTTP proxy on 127.0.0.1: no {@code initialize}, no {@code Mcp-Session-Id},
 * {@code server/discover} first, {@code Mcp-Method} / {@code Mcp-Name} on every request. The client
 * runs as a process per scenario and prints one JSON line per step, with its duration.
 */
class TypeScriptSdk2026IT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");
    private static final long SEED = 2026_07_28L;

    @TempDir
    static Path tempDir;

    private static Process server;
    private static Path serverLog;
    private static URI serverUrl;

    @BeforeAll
    static void startServer() throws Exception {
        serverLog = tempDir.resolve("ts-server.log");
        ProcessBuilder builder = new ProcessBuilder(TestPeers.node().toString(), script("server.mjs").toString())
                .redirectErrorStream(true).redirectOutput(serverLog.toFile());
        builder.environment().put("PORT", "0"); // the server takes a free port and prints it: no race for one
        server = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Matcher listening = LISTENING.matcher("");
        while (!listening.reset(serverLog()).find()) {
            if (!server.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("the TypeScript SDK server did not start:\n" + serverLog());
            }
            Thread.sleep(50);
        }
        serverUrl = URI.create("http://127.0.0.1:" + listening.group(1) + "/mcp");
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.destroy();
            if (!server.waitFor(10, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void throughTheProxyTheClientGetsWhatItGetsDirectlyAndTheServerSeesTheSameRequests() throws Exception {
        List<String> steps = List.of("list", "echo:hi", "slow:3");
        int before = requestLines().size();
        List<JsonNode> direct = runClient(serverUrl, Duration.ofSeconds(10), steps);
        List<String> directRequests = requestLines().subList(before, requestLines().size());

        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        List<JsonNode> proxied;
        List<String> proxiedRequests;
        try (RunningHttp proxy = proxy("rules: []\n", events)) {
            int mark = requestLines().size();
            proxied = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), steps);
            proxiedRequests = requestLines().subList(mark, requestLines().size());
        }
        for (List<JsonNode> run : List.of(direct, proxied)) {
            assertThat(run).hasSize(4);
            assertThat(run.get(0).path("protocolVersion").asText()).isEqualTo("2026-07-28");
            assertThat(run.get(1).path("tools").toString()).isEqualTo("[\"echo\",\"slow\"]");
            assertThat(run.get(2).path("text").asText()).isEqualTo("hi");
            assertThat(run.get(3).path("text").asText()).isEqualTo("done 3");
            assertThat(run.get(3).path("progress").toString()).as("progress over the SSE answer").isEqualTo("[1,2,3]");
        }
        assertThat(proxiedRequests).as("what reached the server, MCP headers included")
                .isEqualTo(directRequests)
                .containsExactly(
                        "request POST {\"mcp-protocol-version\":\"2026-07-28\",\"mcp-method\":\"server/discover\"}",
                        "request POST {\"mcp-protocol-version\":\"2026-07-28\",\"mcp-method\":\"tools/list\"}",
                        "request POST {\"mcp-protocol-version\":\"2026-07-28\",\"mcp-method\":\"tools/call\",\"mcp-name\":\"echo\"}",
                        "request POST {\"mcp-protocol-version\":\"2026-07-28\",\"mcp-method\":\"tools/call\",\"mcp-name\":\"slow\"}");
        assertThat(events).isEmpty();
    }

    @Test
    void latencyHoldsTheJsonAnswerAndTheSseAnswerAndBothArriveWhole() throws Exception {
        String rules = String.join("\n", "rules:",
                "  - name: slow-answers",
                "    match: {kind: response, method: tools/call}",
                "    fault: {type: latency, latency: 600ms}", "");
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        List<JsonNode> run;
        try (RunningHttp proxy = proxy(rules, events)) {
            run = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), List.of("echo:fast list", "slow:3"));
        }
        JsonNode echo = run.get(1);
        JsonNode slow = run.get(2);
        assertThat(echo.path("text").asText()).isEqualTo("fast list");
        assertThat(echo.path("ms").asLong()).as("the JSON answer was held").isGreaterThanOrEqualTo(590);
        assertThat(slow.path("text").asText()).isEqualTo("done 3");
        assertThat(slow.path("progress").toString()).isEqualTo("[1,2,3]");
        assertThat(slow.path("ms").asLong()).as("the SSE answer was held").isGreaterThanOrEqualTo(590);
        assertThat(events).extracting(FaultEvent::fault).containsExactly("latency", "latency");
        assertThat(events).extracting(FaultEvent::tool).containsExactly("echo", "slow");
    }

    @Test
    void aDroppedAnswerTimesItsCallOutAndTheNextCallIsAnswered() throws Exception {
        String rules = String.join("\n", "rules:",
                "  - name: lose-first-echo",
                "    match: {kind: response, tool: echo}",
                "    times: 1",
                "    fault: {type: drop}", "");
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        List<JsonNode> run;
        try (RunningHttp proxy = proxy(rules, events)) {
            run = runClient(proxy.mcpUrl(), Duration.ofMillis(1500), List.of("echo:lost", "echo:kept"));
        }
        assertThat(run.get(1).has("error")).as("the dropped answer: %s", run.get(1)).isTrue();
        assertThat(run.get(1).path("text").isMissingNode()).isTrue();
        assertThat(run.get(2).path("text").asText()).as("the twin arrives").isEqualTo("kept");
        assertThat(events).extracting(FaultEvent::fault).containsExactly("drop");
    }

    @Test
    void anInjectedJsonRpcErrorReachesTheClientWithItsCodeAndAnotherToolIsAnswered() throws Exception {
        String rules = String.join("\n", "rules:",
                "  - name: echo-down",
                "    match: {kind: request, tool: echo}",
                "    fault: {type: error, code: -32603, message: \"echo is down (injected)\"}", "");
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        List<JsonNode> run;
        int before = requestLines().size();
        List<String> reached;
        try (RunningHttp proxy = proxy(rules, events)) {
            run = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), List.of("echo:x", "slow:1"));
            reached = requestLines().subList(before, requestLines().size());
        }
        JsonNode error = run.get(1).path("error");
        assertThat(error.path("code").asInt()).as("%s", run.get(1)).isEqualTo(-32603);
        assertThat(error.path("message").asText()).contains("echo is down (injected)");
        assertThat(run.get(2).path("text").asText()).isEqualTo("done 1");
        assertThat(reached).as("the request answered by the proxy never reached the server")
                .noneMatch(line -> line.contains("\"mcp-name\":\"echo\""))
                .anyMatch(line -> line.contains("\"mcp-name\":\"slow\""));
        assertThat(events).extracting(FaultEvent::fault).containsExactly("error");
    }

    @Test
    void a503IsAnHttpErrorForTheClientAndTheNextCallIsAnswered() throws Exception {
        String rules = String.join("\n", "rules:",
                "  - name: busy",
                "    match: {kind: request, tool: echo}",
                "    times: 1",
                "    fault: {type: http_status, status: 503, headers: {Retry-After: \"1\"}, body: busy}", "");
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        List<JsonNode> run;
        try (RunningHttp proxy = proxy(rules, events)) {
            run = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), List.of("echo:refused", "echo:served"));
        }
        JsonNode refused = run.get(1).path("error");
        assertThat(refused.path("name").asText()).as("%s", run.get(1)).isEqualTo("SdkHttpError");
        assertThat(refused.path("status").asInt()).isEqualTo(503);
        assertThat(refused.path("message").asText()).contains("busy");
        assertThat(run.get(2).path("text").asText()).isEqualTo("served");
        assertThat(events).extracting(FaultEvent::fault).containsExactly("http_status");
    }

    @Test
    void aSessionlessRecordingReplaysToTheSameClientAndAFaultActsOnTheReplay() throws Exception {
        Path cassette = tempDir.resolve("ts-sdk-2026.ndjson");
        List<String> steps = List.of("list", "echo:hi", "slow:3");
        List<JsonNode> live;
        try (RunningHttp recording = McpChaosProxy.http(serverUrl).record(cassette).start()) {
            live = runClient(recording.mcpUrl(), Duration.ofSeconds(10), steps);
        }
        // Verify (--verify-url) the recording against the live server: sessionless, with its Mcp-* headers.
        java.util.List<dev.mcpchaos.server.record.RedactPath> ignored = new ArrayList<>();
        for (String path : dev.mcpchaos.server.replay.verify.VerifyCli.DEFAULT_IGNORED) {
            ignored.add(dev.mcpchaos.server.record.RedactPath.parse(path));
        }
        dev.mcpchaos.server.replay.verify.VerifyResult verified = new dev.mcpchaos.server.replay.verify.HttpVerifier(
                Cassette.read(cassette), serverUrl, new dev.mcpchaos.server.replay.verify.JsonDiff(ignored),
                Duration.ofSeconds(10)).run();
        assertThat(verified.items()).extracting(dev.mcpchaos.server.replay.verify.VerifyResult.Item::label)
                .containsExactly("server/discover", "tools/list", "tools/call echo", "tools/call slow");
        assertThat(verified.allSame()).as(verified.report()).isTrue();
        Cassette recorded = Cassette.read(cassette);
        assertThat(recorded.header().protocolVersion()).as("the header says what was spoken").isEqualTo("2026-07-28");
        assertThat(recorded.header().serverInfo()).as("who answered, from the first answer's _meta").isNotNull();
        assertThat(recorded.header().serverInfo().path("name").asText()).isEqualTo("ts-sdk-2026-peer");
        assertThat(recorded.entries()).as("sessionless exchanges in the order they came")
                .filteredOn(e -> e.direction() == dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER)
                .extracting(e -> e.method()).containsExactly("server/discover", "tools/list", "tools/call", "tools/call");
        int serverRequests = requestLines().size();

        HttpReplay replay = new HttpReplay(List.of(Cassette.read(cassette)), OnExhausted.LAST);
        List<JsonNode> replayed;
        List<JsonNode> slowed;
        try (RunningHttp proxy = McpChaosProxy.replay(replay).start()) {
            replayed = runClient(proxy.mcpUrl(), Duration.ofSeconds(10),
                    List.of("list", "echo:hi", "slow:3", "echo:never recorded"));
            proxy.chaos().add(dev.mcpchaos.rules.Rules.latency("slow-echo", Duration.ofMillis(500)).onTool("echo")
                    .onResponses());
            slowed = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), List.of("echo:hi"));
            assertThat(proxy.chaos().rule("slow-echo").injected()).isEqualTo(1);
        }
        assertThat(requestLines()).as("the replay needs no server").hasSize(serverRequests);
        for (int step = 0; step <= 3; step++) {
            JsonNode expected = ((com.fasterxml.jackson.databind.node.ObjectNode) live.get(step).deepCopy()).without("ms");
            JsonNode actual = ((com.fasterxml.jackson.databind.node.ObjectNode) replayed.get(step).deepCopy()).without("ms");
            assertThat(actual).as("step %s", step == 0 ? "connect" : steps.get(step - 1)).isEqualTo(expected);
        }
        assertThat(replayed.get(3).path("progress").toString()).as("progress replayed as SSE events").isEqualTo("[1,2,3]");
        JsonNode unrecorded = replayed.get(4).path("error");
        assertThat(unrecorded.path("code").asInt()).as("%s", replayed.get(4)).isEqualTo(-32601);
        assertThat(unrecorded.path("message").asText()).contains("tools/call");
        assertThat(replay.unmatched()).isEqualTo(1);
        assertThat(slowed.get(1).path("text").asText()).isEqualTo("hi");
        assertThat(slowed.get(1).path("ms").asLong()).as("the replayed answer was held").isGreaterThanOrEqualTo(490);
    }

    @Test
    void theRefereeFindsNothingWrongWithTheSdksOwnSessionlessTrafficAndFlagsAHeaderThatLies() throws Exception {
        dev.mcpchaos.server.check.Referee referee = new dev.mcpchaos.server.check.Referee();
        try (RunningHttp proxy = McpChaosProxy.http(serverUrl).check(referee).start()) {
            List<JsonNode> run = runClient(proxy.mcpUrl(), Duration.ofSeconds(10), List.of("list", "echo:hi", "slow:2"));
            assertThat(run.get(2).path("text").asText()).isEqualTo("hi");

            // The twin: a request whose Mcp-Name says another tool than its body (a gateway routing
            // on the header would send it elsewhere than the server runs it).
            java.net.http.HttpResponse<String> lying = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(proxy.mcpUrl())
                            .header("Content-Type", "application/json")
                            .header("Accept", "application/json, text/event-stream")
                            .header("MCP-Protocol-Version", "2026-07-28")
                            .header("Mcp-Method", "tools/call")
                            .header("Mcp-Name", "slow")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":9,"
                                    + "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                                    + "{\"text\":\"x\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                                    + "\"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\","
                                    + "\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}}}"))
                            .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(lying.statusCode()).as(lying.body()).isEqualTo(400); // the SDK server refuses it too
        }
        dev.mcpchaos.server.check.Referee.Report report = referee.report();
        assertThat(report.messages()).isGreaterThanOrEqualTo(9);
        assertThat(report.firedIds()).as("%s", report.all()).containsExactly("http.mcp-name-header");
        assertThat(report.count(dev.mcpchaos.server.check.Check.MCP_NAME_HEADER)).isEqualTo(1);
        assertThat(report.all().get(0).detail()).contains("Mcp-Name 'slow'").contains("params.name 'echo'");
    }

    // ----------------------------------------------------------------------------------------------

    private static RunningHttp proxy(String rules, List<FaultEvent> events) {
        return McpChaosProxy.http(serverUrl).rules(RuleSet.parse(rules, "ts-sdk.yaml")).seed(SEED)
                .faultListener(events::add).start();
    }

    /** Runs {@code client.mjs} against {@code url}: one JSON line per step, the connect step first. */
    private static List<JsonNode> runClient(URI url, Duration requestTimeout, List<String> steps) throws Exception {
        List<String> command = new ArrayList<>(List.of(TestPeers.node().toString(), script("client.mjs").toString(),
                url.toString()));
        command.addAll(steps);
        Path out = Files.createTempFile(tempDir, "ts-client-", ".out");
        Path err = Files.createTempFile(tempDir, "ts-client-", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().put("TIMEOUT_MS", Long.toString(requestTimeout.toMillis()));
        Process client = builder.start();
        if (!client.waitFor(60, TimeUnit.SECONDS)) {
            client.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("the TypeScript SDK client did not finish within 60 s; stderr:\n"
                    + Files.readString(err, StandardCharsets.UTF_8));
        }
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            lines.add(JSON.readTree(line));
        }
        assertThat(lines).as("one line per step and the connect; stderr:%n%s", Files.readString(err, StandardCharsets.UTF_8))
                .hasSize(steps.size() + 1);
        assertThat(lines.get(0).has("error")).as("connect: %s", lines.get(0)).isFalse();
        return lines;
    }

    private static Path script(String name) {
        Path script = TestPeers.testPeersDir().resolve("ts-sdk").resolve(name);
        Path sdk = TestPeers.testPeersDir().resolve("node_modules/@modelcontextprotocol/client/package.json");
        if (!Files.isRegularFile(sdk)) {
            throw new IllegalStateException("the TypeScript SDK is not installed: " + sdk
                    + " (run: cd test-peers && npm ci)");
        }
        return script;
    }

    private static String serverLog() {
        try {
            return Files.readString(serverLog, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The server's "request METHOD {mcp headers}" lines so far. */
    private static List<String> requestLines() {
        return serverLog().lines().filter(line -> line.startsWith("request ")).toList();
    }
}
