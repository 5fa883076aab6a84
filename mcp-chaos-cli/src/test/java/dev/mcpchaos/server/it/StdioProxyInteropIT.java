package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.mcpchaos.server.cli.Main;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The official MCP Java SDK client ({@code StdioClientTransport}, 2.1.0) talks through the real
 * {@code mcp-chaos stdio} (the packaged jar, a child process of the client, with Netty's paranoid
 * leak detection on) to two real servers: (a) the built-in demo server
 * ({@code mcp-chaos demo-server}) and (b) the third-party {@code @modelcontextprotocol/server-everything}
 * ({@code node .../dist/index.js stdio}).
 *
 * <p>It proves, for issue 2:
 * <ul>
 *   <li>initialize, tools/list, tools/call, a tools/call with progress notifications, a JSON-RPC
 *       error and ping all work through the proxy, with the real values each server returns;</li>
 *   <li>byte-for-byte transparency: with {@link Tee} capturing both hops, what the server read is
 *       exactly what the client wrote and what the client read is exactly what the server wrote,
 *       with and without {@code --log-traffic} (so the stderr log path runs while stdout stays pure
 *       protocol);</li>
 *   <li>the server's stderr reaches the client's stderr through the proxy, never its stdout;</li>
 *   <li>when the client closes (the SDK sends SIGTERM to the proxy, or closes its stdin when a
 *       shell sits in between), the proxy and the server it started both exit: nothing is left
 *       running;</li>
 *   <li>no {@code LEAK:} is reported on the proxy's stderr.</li>
 * </ul>
 *
 * <p>Each test starts a fresh proxy and server and runs one whole session, because starting the
 * JVMs and node dominates the run time.
 */
class StdioProxyInteropIT {

    private static final Duration TIMEOUT = TestPeers.REQUEST_TIMEOUT;

    /** The two real servers behind the proxy. */
    enum Peer {
        /** {@code mcp-chaos demo-server}, in its own JVM tuned for start-up as {@code mcp-chaos demo} runs it. */
        DEMO,
        /** {@code node .../server-everything/dist/index.js stdio}. */
        EVERYTHING;

        List<String> command() {
            if (this == EVERYTHING) {
                return TestPeers.serverEverythingStdioCommand();
            }
            return List.of(TestPeers.java().toString(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-jar", TestPeers.mcpChaosJar().toString(), "demo-server");
        }
    }

    @TempDir
    Path tempDir;

    private final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
    private final List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    /** Unique per test and in the proxy's argv (as {@code -e MCPCHAOS_IT_RUN=...}), to find its processes. */
    private final String marker = "MCPCHAOS_IT_RUN=" + UUID.randomUUID();
    private Peer peer;
    private McpSyncClient client;

    /**
     * The proxy under test as an argv function: {@code server -> [java, paranoid leak detection,
     * -jar, mcp-chaos.jar, stdio, -e MARKER, options..., --, server...]}.
     */
    private UnaryOperator<List<String>> proxy(List<String> options) {
        return server -> {
            List<String> argv = new ArrayList<>(List.of(TestPeers.java().toString(),
                    "-Dio.netty.leakDetection.level=paranoid",
                    "-jar", TestPeers.mcpChaosJar().toString(), "stdio", "-e", marker));
            argv.addAll(options);
            argv.add("--");
            argv.addAll(server);
            return List.copyOf(argv);
        };
    }

    /** Builds (does not initialize) an SDK client that runs {@code command}. */
    private McpSyncClient connect(Peer peer, List<String> command) {
        this.peer = peer;
        client = TestPeers.stdioClient(command, stderr::add)
                .progressConsumer(progress::add)
                .toolsChangeConsumer(toolsChanged::add)
                .build();
        return client;
    }

    /** Builds an SDK client whose child process is the proxy in front of {@code peer}. */
    private McpSyncClient connectThroughProxy(Peer peer, String... options) {
        return connect(peer, proxy(List.of(options)).apply(peer.command()));
    }

    @AfterEach
    void closeAndCheck() {
        closeClient();
        assertThat(stderr).as("proxy stderr (Netty paranoid leak detection)").noneMatch(l -> l.contains("LEAK:"));
    }

    /**
     * Lets exchanges the SDK started on its own finish, closes the client, and waits until the
     * proxy, everything it started, and any shell around it have exited.
     */
    private void closeClient() {
        if (client == null) {
            return;
        }
        McpSyncClient closing = client;
        client = null;
        List<ProcessHandle> tree = new ArrayList<>();
        try {
            if (closing.isInitialized() && peer == Peer.EVERYTHING) {
                // server-everything sends tools/list_changed after initialized and the SDK answers
                // with a tools/list; closing while that is in flight cuts it off (see Tee).
                await("the SDK's own tools/list after tools/list_changed").atMost(TIMEOUT)
                        .until(() -> !toolsChanged.isEmpty());
            }
            ProcessHandle.allProcesses()
                    .filter(p -> p.info().arguments()
                            .map(args -> Arrays.stream(args).anyMatch(arg -> arg.contains(marker)))
                            .orElse(false))
                    .forEach(p -> {
                        tree.add(p);
                        p.descendants().forEach(tree::add);
                    });
        } finally {
            closing.closeGracefully();
        }
        assertThat(tree).as("the proxy process, found by its argv").isNotEmpty();
        try {
            await("the proxy and the server to exit after the client closed").atMost(TIMEOUT)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> tree.stream().noneMatch(ProcessHandle::isAlive));
        } finally {
            tree.forEach(ProcessHandle::destroyForcibly);
        }
    }

    // ================================================================ (a) the built-in demo server

    /**
     * One session, in the order a client goes: initialize, tools/list, tools/call, a call with
     * progress, ping.
     */
    @Test
    void demoServerSessionThroughTheProxy() {
        McpSyncClient c = connectThroughProxy(Peer.DEMO);

        // initialize
        McpSchema.InitializeResult init = c.initialize();
        assertThat(init.serverInfo().name()).isEqualTo("mcp-chaos-demo");
        assertThat(init.serverInfo().version()).isEqualTo(Main.version());
        assertThat(init.protocolVersion()).isEqualTo("2025-11-25");
        assertThat(init.capabilities().tools()).isNotNull();
        assertThat(init.capabilities().tools().listChanged()).isFalse();
        assertThat(init.capabilities().logging()).isNotNull();
        assertThat(init.instructions()).contains("built-in demo server").contains("echo, add, slow, large");
        assertThat(c.isInitialized()).isTrue();

        // tools/list
        List<McpSchema.Tool> tools = c.listTools().tools();
        assertThat(tools).extracting(McpSchema.Tool::name).containsExactly("echo", "add", "slow", "large");
        McpSchema.Tool echoTool = tools.get(0);
        assertThat(echoTool.description()).isEqualTo("Returns the given text unchanged.");
        assertThat(echoTool.inputSchema()).containsEntry("type", "object");
        assertThat(echoTool.inputSchema().get("required")).asInstanceOf(InstanceOfAssertFactories.LIST)
                .containsExactly("text");
        assertThat(tools.get(2).inputSchema().get("properties")).asInstanceOf(InstanceOfAssertFactories.MAP)
                .containsKey("ms");

        // tools/call
        String text = "through mcp-chaos: \"quoted\", a\nnewline, a tab\t, \u00e9\u4e2d\ud83d\ude00 and \\ backslash";
        McpSchema.CallToolResult echo = c.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("text", text)).build());
        assertThat(echo.isError()).isFalse();
        assertThat(textOf(echo)).isEqualTo(text);
        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("add")
                .arguments(Map.of("a", 2, "b", 40)).build()))).isEqualTo("42");
        // Beyond a double's exact range: the digits must cross the proxy untouched.
        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("add")
                .arguments(Map.of("a", 9007199254740993L, "b", 1)).build()))).isEqualTo("9007199254740994");
        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("large")
                .arguments(Map.of("bytes", 300_000)).build())))
                .hasSize(300_000).startsWith("The quick brown fox jumps over the lazy dog. ");

        // a call with progress notifications
        McpSchema.CallToolResult slow = c.callTool(McpSchema.CallToolRequest.builder("slow")
                .arguments(Map.of("ms", 250))
                .progressToken("demo-progress-1")
                .build());
        assertThat(slow.isError()).isFalse();
        assertThat(textOf(slow)).isEqualTo("slept 250 ms");
        await("5 progress notifications").atMost(TIMEOUT).until(() -> progress.size() >= 5);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).containsOnly("demo-progress-1");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::total).containsOnly(5.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::message).containsExactly(
                "slept 50 of 250 ms", "slept 100 of 250 ms", "slept 150 of 250 ms",
                "slept 200 of 250 ms", "slept 250 of 250 ms");

        // ping
        assertThat(c.ping()).asInstanceOf(InstanceOfAssertFactories.MAP).isEmpty();
    }

    @Test
    void demoServerErrorsCrossTheProxyAndTheSessionGoesOn() {
        McpSyncClient c = connectThroughProxy(Peer.DEMO);
        c.initialize();

        // A tool-level error is a result with isError.
        McpSchema.CallToolResult badArgument = c.callTool(McpSchema.CallToolRequest.builder("add")
                .arguments(Map.of("a", "two", "b", 1)).build());
        assertThat(badArgument.isError()).isTrue();
        assertThat(textOf(badArgument)).isEqualTo("add: argument 'a' must be a number, got string \"two\"");

        // A protocol-level error is a JSON-RPC error response.
        assertThatThrownBy(() -> c.callTool(McpSchema.CallToolRequest.builder("no-such-tool")
                .arguments(Map.of()).build()))
                .isInstanceOf(McpError.class)
                .satisfies(e -> {
                    McpSchema.JSONRPCResponse.JSONRPCError error = ((McpError) e).getJsonRpcError();
                    assertThat(error.code()).isEqualTo(-32602);
                    assertThat(error.message()).isEqualTo("Unknown tool: no-such-tool");
                });

        // Without a progress token, no progress: the ping answered after the result proves nothing
        // was still on its way.
        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("slow")
                .arguments(Map.of("ms", 50)).build()))).isEqualTo("slept 50 ms");
        assertThat(c.ping()).asInstanceOf(InstanceOfAssertFactories.MAP).isEmpty();
        assertThat(progress).isEmpty();

        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("text", "still here")).build()))).isEqualTo("still here");
    }

    // ================================================================ (b) server-everything

    /** One session against the third-party server, as {@link #demoServerSessionThroughTheProxy}. */
    @Test
    void serverEverythingSessionThroughTheProxy() {
        McpSyncClient c = connectThroughProxy(Peer.EVERYTHING);

        // initialize
        McpSchema.InitializeResult init = c.initialize();
        assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
        assertThat(init.serverInfo().version()).isEqualTo("2.0.0");
        assertThat(init.protocolVersion()).isEqualTo("2025-11-25");
        assertThat(init.capabilities().tools()).isNotNull();
        assertThat(init.capabilities().tools().listChanged()).isTrue();
        assertThat(init.capabilities().logging()).isNotNull();
        assertThat(init.instructions()).contains("trigger-long-running-operation");
        // The server's stderr is copied to the proxy's stderr, which the SDK reads: not to stdout.
        await("the server's stderr banner").atMost(TIMEOUT)
                .until(() -> stderr.contains("Starting default (STDIO) server..."));

        // tools/list, and the server's own tools/list_changed with the SDK's re-fetch
        List<McpSchema.Tool> tools = c.listTools().tools();
        assertThat(tools).extracting(McpSchema.Tool::name)
                .contains("echo", "get-sum", "trigger-long-running-operation", "get-tiny-image");
        McpSchema.Tool echoTool = tools.stream().filter(t -> t.name().equals("echo")).findFirst().orElseThrow();
        assertThat(echoTool.description()).isEqualTo("Echoes back the input string");
        assertThat(echoTool.inputSchema().get("required")).asInstanceOf(InstanceOfAssertFactories.LIST)
                .containsExactly("message");
        await("tools/list_changed and the SDK's re-fetch").atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty());
        assertThat(toolsChanged.get(0)).extracting(McpSchema.Tool::name).contains("simulate-research-query");

        // tools/call
        String message = "hello through mcp-chaos \u00e9\u4e2d\ud83d\ude00 \"q\"\n";
        McpSchema.CallToolResult echo = c.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("message", message)).build());
        assertThat(echo.isError()).isNotEqualTo(Boolean.TRUE);
        assertThat(textOf(echo)).isEqualTo("Echo: " + message);
        assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("get-sum")
                .arguments(Map.of("a", 2, "b", 40)).build()))).isEqualTo("The sum of 2 and 40 is 42.");

        // a call with progress notifications
        McpSchema.CallToolResult result = c.callTool(McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                .arguments(Map.of("duration", 0.5, "steps", 5))
                .progressToken("everything-progress-1")
                .build());
        assertThat(textOf(result)).isEqualTo("Long running operation completed. Duration: 0.5 seconds, Steps: 5.");
        await("5 progress notifications").atMost(TIMEOUT).until(() -> progress.size() >= 5);
        assertThat(progress).hasSize(5);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken)
                .containsOnly("everything-progress-1");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::total).containsOnly(5.0);

        // ping
        assertThat(c.ping()).asInstanceOf(InstanceOfAssertFactories.MAP).isEmpty();
    }

    // ================================================================ byte for byte

    /**
     * The four-file capture: {@code tee client-sent | mcp-chaos stdio -- (tee server-got | SERVER |
     * tee server-sent) | tee client-got}. The whole conversation (initialize, tools/list, calls,
     * progress, ping, and for server-everything its tools/list_changed and the SDK's re-fetch) must
     * arrive unchanged on each side.
     */
    @ParameterizedTest(name = "{0}, proxy options [{1}]")
    @CsvSource({"DEMO,''", "DEMO,--log-traffic", "EVERYTHING,''", "EVERYTHING,--log-traffic"})
    void eachSideReceivesByteForByteWhatTheOtherSent(Peer peer, String options) throws IOException {
        List<String> proxyOptions = options.isBlank() ? List.of() : List.of(options.trim().split("\\s+"));
        boolean logTraffic = proxyOptions.contains("--log-traffic");
        Tee tee = Tee.in(tempDir.resolve("capture " + peer));
        McpSyncClient c = connect(peer, tee.throughProxy(peer.command(), proxy(proxyOptions)));

        McpSchema.InitializeResult init = c.initialize();
        List<McpSchema.Tool> tools = c.listTools().tools();
        String progressToken = "bytes-" + peer;
        McpSchema.CallToolResult echo;
        McpSchema.CallToolResult slow;
        if (peer == Peer.DEMO) {
            assertThat(init.serverInfo().name()).isEqualTo("mcp-chaos-demo");
            assertThat(tools).extracting(McpSchema.Tool::name).containsExactly("echo", "add", "slow", "large");
            echo = c.callTool(McpSchema.CallToolRequest.builder("echo")
                    .arguments(Map.of("text", "byte \u00e9\u4e2d\ud83d\ude00 \"exact\"")).build());
            assertThat(textOf(echo)).isEqualTo("byte \u00e9\u4e2d\ud83d\ude00 \"exact\"");
            slow = c.callTool(McpSchema.CallToolRequest.builder("slow")
                    .arguments(Map.of("ms", 100)).progressToken(progressToken).build());
            assertThat(textOf(slow)).isEqualTo("slept 100 ms");
            assertThat(textOf(c.callTool(McpSchema.CallToolRequest.builder("large")
                    .arguments(Map.of("bytes", 100_000)).build()))).hasSize(100_000);
        } else {
            assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
            assertThat(tools).extracting(McpSchema.Tool::name).contains("echo", "trigger-long-running-operation");
            echo = c.callTool(McpSchema.CallToolRequest.builder("echo")
                    .arguments(Map.of("message", "byte \u00e9\u4e2d\ud83d\ude00 \"exact\"")).build());
            assertThat(textOf(echo)).isEqualTo("Echo: byte \u00e9\u4e2d\ud83d\ude00 \"exact\"");
            slow = c.callTool(McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                    .arguments(Map.of("duration", 0.3, "steps", 3)).progressToken(progressToken).build());
            assertThat(textOf(slow)).isEqualTo("Long running operation completed. Duration: 0.3 seconds, Steps: 3.");
        }
        assertThat(c.ping()).asInstanceOf(InstanceOfAssertFactories.MAP).isEmpty();
        int steps = peer == Peer.DEMO ? 5 : 3;
        await("the progress notifications").atMost(TIMEOUT).until(() -> progress.size() >= steps);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).containsOnly(progressToken);
        assertThat(progress).hasSize(steps);

        closeClient();
        tee.awaitWritersExited(TIMEOUT);

        assertThat(tee.clientSent()).isNotEmptyFile();
        assertThat(tee.serverSent()).isNotEmptyFile();
        assertThat(tee.serverGot()).as("what the server read vs what the client wrote")
                .hasSameBinaryContentAs(tee.clientSent());
        assertThat(tee.clientGot()).as("what the client read vs what the server wrote")
                .hasSameBinaryContentAs(tee.serverSent());
        String clientSent = Files.readString(tee.clientSent(), UTF_8);
        String clientGot = Files.readString(tee.clientGot(), UTF_8);
        assertThat(clientSent).endsWith("\n")
                .contains("\"method\":\"initialize\"")
                .contains("\"method\":\"notifications/initialized\"")
                .contains("\"method\":\"tools/list\"")
                .contains("\"method\":\"tools/call\"")
                .contains("\"method\":\"ping\"");
        assertThat(clientGot).endsWith("\n")
                .contains("\"method\":\"notifications/progress\"")
                .contains("\"progressToken\":\"" + progressToken + "\"");
        assertThat(clientGot.lines()).filteredOn(l -> l.contains("notifications/progress")).hasSize(steps);
        if (peer == Peer.EVERYTHING) {
            assertThat(clientGot).contains("\"method\":\"notifications/tools/list_changed\"");
            assertThat(stderr).contains("Starting default (STDIO) server...");
        }
        // Every line on the client's side is a JSON-RPC message: no log line leaked into stdout.
        assertThat(clientGot.lines()).allSatisfy(l -> assertThat(l).startsWith("{").contains("\"jsonrpc\":\"2.0\""));

        List<String> traffic = stderr.stream().filter(l -> l.contains("traffic:")).collect(Collectors.toList());
        if (logTraffic) {
            int sentLines = (int) clientSent.lines().count();
            int gotLines = (int) clientGot.lines().count();
            assertThat(traffic).filteredOn(l -> l.contains("c->s")).hasSize(sentLines);
            assertThat(traffic).filteredOn(l -> l.contains("s->c")).hasSize(gotLines);
            assertThat(traffic).anySatisfy(l -> assertThat(l).contains("c->s").contains("initialize"));
            assertThat(traffic).anySatisfy(l -> assertThat(l).contains("s->c").contains("notifications/progress"));
            assertThat(traffic).anySatisfy(l -> assertThat(l).contains("s->c").contains("response")
                    .contains("tools/call").contains("echo"));
        } else {
            assertThat(traffic).isEmpty();
        }
    }

    private static String textOf(McpSchema.CallToolResult result) {
        assertThat(result.content()).hasSize(1);
        assertThat(result.content().get(0)).isInstanceOf(McpSchema.TextContent.class);
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }
}
