package dev.mcpchaos.server.it;

import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * The real HTTP peers of the Streamable HTTP integration tests, all on 127.0.0.1:
 * {@code @modelcontextprotocol/server-everything} in {@code streamableHttp} mode as a child
 * process, the MCP Java SDK's own server ({@link HttpServletStreamableServerTransportProvider})
 * in an embedded Tomcat, and the SDK's Streamable HTTP client.
 */
final class HttpPeers {

    /** Bound for every SDK request and every wait in these tests. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private HttpPeers() {
    }

    /** An official SDK client spec over {@link HttpClientStreamableHttpTransport} to {@code endpoint}. */
    static McpClient.SyncSpec sdkClient(URI endpoint) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + endpoint.getHost() + ":" + endpoint.getPort())
                .endpoint(endpoint.getPath())
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        return McpClient.sync(transport)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-http-it", "0.0.0").build())
                .requestTimeout(TIMEOUT)
                .initializationTimeout(TIMEOUT);
    }

    /** {@code http://127.0.0.1:PORT/mcp}. */
    static URI endpoint(InetSocketAddress address) {
        return URI.create("http://127.0.0.1:" + address.getPort() + "/mcp");
    }

    /**
     * server-everything prints "listening on port N" before it learns that the port is taken, then
     * "Failed to start" and exits: alive 300 ms after the line, without that line, it listens.
     */
    static boolean listensAfterReadyLine(Process process, java.util.function.Supplier<String> log) {
        try {
            return !process.waitFor(300, TimeUnit.MILLISECONDS) && !log.get().contains("Failed to start");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Every port {@link #freePort()} has returned in this JVM. */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A free port on 127.0.0.1 below the kernel's ephemeral range, for a server a test starts on
     * it: no socket bound to port 0 in the meantime (a proxy under test, say) can be handed it. A
     * port just let go can be handed out again at once; in CI a proxy got its upstream's port that
     * way and relayed to itself until no file descriptor was left. Nor is a port handed out twice in
     * one JVM: a test that draws several before starting anything could otherwise be given one port
     * for two listeners (a CI run put a sidecar's mcp and metrics listeners on one).
     */
    static int freePort() {
        int below = ephemeralLow();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; below > 2048 && attempt < 200; attempt++) {
            int port = random.nextInt(Math.max(1024, below - 16384), below);
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                if (HANDED_OUT.add(port)) {
                    return port;
                }
            } catch (IOException taken) {
                // in use: draw again
            }
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            HANDED_OUT.add(socket.getLocalPort());
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first port of Linux's ephemeral range (32768 where it cannot be read). */
    private static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    /** The text of a tool result's single text content. */
    static String text(McpSchema.CallToolResult result) {
        return result.content().stream()
                .filter(McpSchema.TextContent.class::isInstance)
                .map(c -> ((McpSchema.TextContent) c).text())
                .collect(Collectors.joining());
    }

    /**
     * Replaces the values a server makes up at random, so two runs of one conversation compare
     * equal: the session id becomes {@code <session>} and every UUID {@code <uuid-N>}, N counting
     * distinct UUIDs in order of first appearance across all the texts.
     */
    static List<String> nameRandomValues(List<String> texts, String session) {
        java.util.Map<String, String> names = new java.util.LinkedHashMap<>();
        java.util.regex.Pattern uuid = java.util.regex.Pattern.compile(
                "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
        List<String> out = new java.util.ArrayList<>();
        for (String text : texts) {
            java.util.regex.Matcher m = uuid.matcher(text.replace(session, "<session>"));
            StringBuilder sb = new StringBuilder();
            while (m.find()) {
                String name = names.computeIfAbsent(m.group(), k -> "<uuid-" + (names.size() + 1) + ">");
                m.appendReplacement(sb, java.util.regex.Matcher.quoteReplacement(name));
            }
            m.appendTail(sb);
            out.add(sb.toString());
        }
        return out;
    }

    // ------------------------------------------------------------------------------ server-everything

    /**
     * {@code PORT=n node .../server-everything/dist/index.js streamableHttp}. It listens on all
     * interfaces; the tests only ever connect to 127.0.0.1.
     */
    static final class ServerEverything implements AutoCloseable {
        private final Process process;
        private final int port;
        private final Path log;

        private ServerEverything(Process process, int port, Path log) {
            this.process = process;
            this.port = port;
            this.log = log;
        }

        static ServerEverything start(Path dir) {
            return start(dir, "streamableHttp", "listening on port ");
        }

        /**
         * server-everything in another HTTP mode, such as {@code sse} (the legacy HTTP+SSE
         * transport: {@code GET /sse}, {@code POST /message}), ready once its log shows
         * {@code readyText} followed by the port.
         */
        static ServerEverything start(Path dir, String mode, String readyText) {
            return start(dir, mode, readyText, java.util.Map.of());
        }

        /** server-everything in {@code mode} with {@code environment} added to what it inherits. */
        static ServerEverything start(Path dir, String mode, String readyText, java.util.Map<String, String> environment) {
            IllegalStateException failure = null;
            for (int attempt = 1; attempt <= 3; attempt++) {
                int port = freePort();
                Path log = dir.resolve("server-everything-" + port + ".log");
                ProcessBuilder builder = new ProcessBuilder(TestPeers.node().toString(),
                        TestPeers.serverEverythingEntry().toString(), mode)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile());
                builder.environment().putAll(environment);
                builder.environment().put("PORT", Integer.toString(port));
                Process process;
                try {
                    process = builder.start();
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot start server-everything", e);
                }
                ServerEverything server = new ServerEverything(process, port, log);
                await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                        .until(() -> !process.isAlive() || server.log().contains(readyText + port));
                if (listensAfterReadyLine(process, server::log)) {
                    return server;
                }
                failure = new IllegalStateException("server-everything exited on port " + port + ":\n" + server.log());
                server.close();
            }
            throw failure;
        }

        int port() {
            return port;
        }

        URI endpoint() {
            return URI.create("http://127.0.0.1:" + port + "/mcp");
        }

        String log() {
            try {
                return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------------------ the SDK's server

    /**
     * The MCP Java SDK server over its servlet Streamable HTTP transport in an embedded Tomcat on
     * 127.0.0.1, endpoint {@code /mcp}. Tools:
     * <ul>
     *   <li>{@code echo {text}}: the text;</li>
     *   <li>{@code progress {steps}}: one progress notification per step on the request's SSE
     *       stream (with the call's progress token), then {@code "completed N steps"};</li>
     *   <li>{@code log {message}}: an info log notification with the message, then {@code "logged"};</li>
     *   <li>{@code roots}: asks the client for its roots (a server-to-client request, answered
     *       by the client's POST) and returns their URIs, one per line.</li>
     * </ul>
     * A filter records each request the servlet finished handling as {@code "METHOD session-id"}.
     */
    static final class SdkServer implements AutoCloseable {
        private final Tomcat tomcat;
        private final McpSyncServer server;
        private final int port;
        /** {@code "METHOD mcp-session-id"} of each request, once the servlet has handled it. */
        final List<String> handled;

        private SdkServer(Tomcat tomcat, McpSyncServer server, int port, List<String> handled) {
            this.tomcat = tomcat;
            this.server = server;
            this.port = port;
            this.handled = handled;
        }

        /** Tomcat logs through java.util.logging; held here so the level set on them stays. */
        private static final List<java.util.logging.Logger> QUIET = List.of(
                java.util.logging.Logger.getLogger("org.apache.catalina"),
                java.util.logging.Logger.getLogger("org.apache.coyote"),
                java.util.logging.Logger.getLogger("org.apache.tomcat"));

        static SdkServer start(Path baseDir) {
            QUIET.forEach(logger -> logger.setLevel(java.util.logging.Level.SEVERE));
            HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider
                    .builder()
                    .mcpEndpoint("/mcp")
                    .build();
            McpSyncServer server = McpServer.sync(transport)
                    .serverInfo("sdk-it-server", "1.2.3")
                    .capabilities(McpSchema.ServerCapabilities.builder().tools(true).logging().build())
                    .tools(echoTool(), progressTool(), logTool(), rootsTool())
                    .requestTimeout(TIMEOUT)
                    .build();
            List<String> handled = new CopyOnWriteArrayList<>();
            Tomcat tomcat = new Tomcat();
            tomcat.setBaseDir(baseDir.toString());
            Connector connector = new Connector("HTTP/1.1");
            connector.setPort(0);
            connector.setProperty("address", "127.0.0.1");
            tomcat.getService().addConnector(connector);
            tomcat.setConnector(connector);
            Context context = tomcat.addContext("", null);
            Wrapper wrapper = Tomcat.addServlet(context, "mcp", transport);
            wrapper.setAsyncSupported(true);
            context.addServletMapping("/*", "mcp");
            Filter record = (request, response, chain) -> {
                chain.doFilter(request, response);
                HttpServletRequest http = (HttpServletRequest) request;
                handled.add(http.getMethod() + " " + http.getHeader("Mcp-Session-Id"));
            };
            FilterDef def = new FilterDef();
            def.setFilterName("record");
            def.setFilter(record);
            def.setAsyncSupported("true");
            context.addFilterDef(def);
            FilterMap map = new FilterMap();
            map.setFilterName("record");
            map.addURLPattern("/*");
            context.addFilterMap(map);
            try {
                tomcat.start();
            } catch (LifecycleException e) {
                throw new IllegalStateException("cannot start Tomcat", e);
            }
            return new SdkServer(tomcat, server, connector.getLocalPort(), handled);
        }

        int port() {
            return port;
        }

        URI endpoint() {
            return URI.create("http://127.0.0.1:" + port + "/mcp");
        }

        McpSyncServer server() {
            return server;
        }

        @Override
        public void close() {
            try {
                server.closeGracefully();
            } catch (RuntimeException ignored) {
                // stopping anyway
            }
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (LifecycleException e) {
                throw new IllegalStateException(e);
            }
        }

        private static McpSchema.Tool tool(String name, String description, Map<String, Object> properties) {
            return McpSchema.Tool.builder(name, Map.of("type", "object", "properties", properties))
                    .description(description)
                    .build();
        }

        private static McpServerFeatures.SyncToolSpecification echoTool() {
            return McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool("echo", "Echoes the text", Map.of("text", Map.of("type", "string"))))
                    .callHandler((exchange, request) -> McpSchema.CallToolResult.builder()
                            .addTextContent(String.valueOf(request.arguments().get("text")))
                            .build())
                    .build();
        }

        private static McpServerFeatures.SyncToolSpecification progressTool() {
            return McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool("progress", "Sends one progress notification per step",
                            Map.of("steps", Map.of("type", "integer"))))
                    .callHandler((exchange, request) -> {
                        int steps = ((Number) request.arguments().get("steps")).intValue();
                        Object token = request.meta() == null ? null : request.meta().get("progressToken");
                        for (int i = 1; i <= steps; i++) {
                            if (token != null) {
                                exchange.progressNotification(McpSchema.ProgressNotification.builder(token, i)
                                        .total((double) steps)
                                        .message("step " + i)
                                        .build());
                            }
                        }
                        return McpSchema.CallToolResult.builder()
                                .addTextContent("completed " + steps + " steps")
                                .build();
                    })
                    .build();
        }

        private static McpServerFeatures.SyncToolSpecification logTool() {
            return McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool("log", "Sends an info log notification", Map.of("message", Map.of("type", "string"))))
                    .callHandler((exchange, request) -> {
                        exchange.loggingNotification(McpSchema.LoggingMessageNotification
                                .builder(McpSchema.LoggingLevel.INFO, String.valueOf(request.arguments().get("message")))
                                .logger("sdk-it")
                                .build());
                        return McpSchema.CallToolResult.builder().addTextContent("logged").build();
                    })
                    .build();
        }

        private static McpServerFeatures.SyncToolSpecification rootsTool() {
            return McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool("roots", "Asks the client for its roots", Map.of()))
                    .callHandler((exchange, request) -> McpSchema.CallToolResult.builder()
                            .addTextContent(exchange.listRoots().roots().stream()
                                    .map(McpSchema.Root::uri)
                                    .collect(Collectors.joining("\n")))
                            .build())
                    .build();
        }
    }
}
