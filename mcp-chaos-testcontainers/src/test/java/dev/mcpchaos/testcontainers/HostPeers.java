package dev.mcpchaos.testcontainers;

import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The peers on the host, all on 127.0.0.1: server-everything ({@code streamableHttp}, from
 * {@code test-peers/}) and the MCP Java SDK's client. The minimum of proxy-server's
 * {@code HttpPeers} and {@code TestPeers} these tests need (test classes are not shared across
 * modules).
 */
final class HostPeers {

    /** Bound for every SDK request and every wait. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private HostPeers() {
    }

    static McpClient.SyncSpec sdkClient(URI endpoint) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + endpoint.getHost() + ":" + endpoint.getPort())
                .endpoint(endpoint.getPath())
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        return McpClient.sync(transport)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-testcontainers-it", "0.0.0").build())
                .requestTimeout(TIMEOUT)
                .initializationTimeout(TIMEOUT);
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

    static String text(McpSchema.CallToolResult result) {
        return result.content().stream()
                .filter(McpSchema.TextContent.class::isInstance)
                .map(c -> ((McpSchema.TextContent) c).text())
                .collect(Collectors.joining());
    }

    static Path testPeersDir() {
        String configured = System.getProperty("mcpchaos.testPeers");
        Path dir = configured != null ? Path.of(configured) : Path.of("..", "test-peers");
        if (!Files.isRegularFile(dir.resolve("package.json"))) {
            throw new IllegalStateException("test-peers: " + dir.toAbsolutePath()
                    + " (expected: the repository's test-peers directory, with package.json)");
        }
        return dir.toAbsolutePath().normalize();
    }

    static Path serverEverythingEntry() {
        Path entry = testPeersDir().resolve(Path.of("node_modules", "@modelcontextprotocol", "server-everything",
                "dist", "index.js"));
        if (!Files.isRegularFile(entry)) {
            throw new IllegalStateException("server-everything is not installed: " + entry
                    + " (expected: run (cd test-peers && npm ci --no-audit --no-fund))");
        }
        return entry;
    }

    static Path node() {
        Path bundled = testPeersDir().resolve(Path.of("node_modules", "node", "bin", "node"));
        if (Files.isExecutable(bundled)) {
            return bundled;
        }
        for (String entry : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(entry.isEmpty() ? "." : entry, "node");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("node not found (expected: Node 20+ on PATH, or npm ci in test-peers)");
    }

    /** {@code PORT=n node .../server-everything/dist/index.js streamableHttp}; the tests connect on 127.0.0.1. */
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
            int port = freePort();
            Path log = dir.resolve("server-everything-" + port + ".log");
            ProcessBuilder builder = new ProcessBuilder(node().toString(), serverEverythingEntry().toString(),
                    "streamableHttp")
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().put("PORT", Integer.toString(port));
            Process process;
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start server-everything", e);
            }
            ServerEverything server = new ServerEverything(process, port, log);
            await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                    .until(() -> !process.isAlive() || server.log().contains("listening on port " + port));
            if (!listensAfterReadyLine(process, server::log)) {
                server.close();
                throw new IllegalStateException("server-everything did not start on port " + port + ":\n" + server.log());
            }
            return server;
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
}
