package dev.mcpchaos.junit;

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
import java.util.List;

/** {@code @modelcontextprotocol/server-everything} from {@code test-peers/}, on 127.0.0.1 only. */
final class Peers {

    private Peers() {
    }

    static Path testPeers() {
        return Path.of(System.getProperty("mcpchaos.testPeers", "../test-peers"));
    }

    static Path node() {
        Path bundled = testPeers().resolve("node_modules/node/bin/node");
        if (Files.isExecutable(bundled)) {
            return bundled;
        }
        for (String entry : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(entry.isEmpty() ? "." : entry, "node");
            if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                return candidate.toAbsolutePath();
            }
        }
        throw new IllegalStateException("node not found: neither " + bundled + " nor node on the PATH (run: cd "
                + testPeers() + " && npm ci)");
    }

    static Path serverEverything() {
        Path entry = testPeers().resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        if (!Files.isRegularFile(entry)) {
            throw new IllegalStateException("server-everything not installed: " + entry + " (run: cd " + testPeers()
                    + " && npm ci)");
        }
        return entry.toAbsolutePath();
    }

    /** {@code node .../server-everything/dist/index.js stdio}. */
    static List<String> serverEverythingStdio() {
        return List.of(node().toString(), serverEverything().toString(), "stdio");
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

    /** server-everything on Streamable HTTP on {@code port}; closing it kills it. */
    static final class EverythingHttp implements AutoCloseable {
        private final Process process;
        private final Path log;
        final URI endpoint;

        EverythingHttp(int port) {
            try {
                log = Files.createTempFile("server-everything-", ".log");
                ProcessBuilder builder = new ProcessBuilder(node().toString(), serverEverything().toString(),
                        "streamableHttp").redirectErrorStream(true).redirectOutput(log.toFile());
                builder.environment().put("PORT", Integer.toString(port));
                process = builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start server-everything", e);
            }
            endpoint = URI.create("http://127.0.0.1:" + port + "/mcp");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            // server-everything prints "listening" before it knows that the port is taken (then
            // "Failed to start" and exits): the line alone does not prove it listens.
            while (!log().contains("listening on port " + port) || !settledAlive(process)) {
                if (!process.isAlive() || log().contains("Failed to start") || System.nanoTime() > deadline) {
                    String seen = log();
                    close();
                    throw new IllegalStateException("server-everything did not start on port " + port + ":\n" + seen);
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }

        private boolean settledAlive(Process process) {
            try {
                return !process.waitFor(300, java.util.concurrent.TimeUnit.MILLISECONDS) && !log().contains("Failed to start");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        private String log() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor();
                Files.deleteIfExists(log);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException ignored) {
                // a temporary file
            }
        }
    }
}
