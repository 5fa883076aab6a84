package dev.mcpchaos.server.it;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Locates the real third-party peers the integration tests run against: the Node binary,
 * {@code @modelcontextprotocol/server-everything} (installed by {@code npm ci} into
 * {@code test-peers/} at the repository root), the packaged mcp-chaos jar and the running
 * JVM's {@code java}.
 *
 * <p>Every lookup fails with an {@link IllegalStateException} that says what is missing and
 * the command that fixes it. Nothing is skipped silently: a test that cannot find its peer
 * must fail, or a broken machine would report a green build.
 *
 * <p>System properties (set by the failsafe configuration in {@code proxy-server/pom.xml} and
 * {@code mcp-chaos-cli/pom.xml}, which alone sets {@code mcpchaos.jar}):
 * <ul>
 *   <li>{@code mcpchaos.testPeers}: the {@code test-peers} directory; when absent, the
 *       working directory and its parents are searched for a {@code test-peers/} folder
 *       (so a test started from an IDE finds it too);</li>
 *   <li>{@code mcpchaos.jar}: the shaded jar, {@code mcp-chaos-cli/target/mcp-chaos.jar}.</li>
 * </ul>
 */
public final class TestPeers {

    /** Default bound for every SDK request, {@code initialize} included, in the integration tests. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** Entry point of server-everything, relative to {@code test-peers/}. */
    static final Path SERVER_EVERYTHING_ENTRY =
            Path.of("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

    /** The Node binary of the npm package {@code node@22}, relative to {@code test-peers/}. */
    static final Path NPM_NODE_BINARY = Path.of("node_modules", "node", "bin", "node");

    private TestPeers() {
    }

    /**
     * Returns the {@code test-peers} directory.
     *
     * @throws IllegalStateException if neither the system property nor a walk up from the
     *     working directory finds it
     */
    public static Path testPeersDir() {
        String configured = System.getProperty("mcpchaos.testPeers");
        if (configured != null && !configured.isBlank()) {
            Path dir = Path.of(configured).toAbsolutePath().normalize();
            if (!Files.isDirectory(dir)) {
                throw new IllegalStateException("mcpchaos.testPeers: " + dir
                        + " (expected: an existing directory with package.json; it lives at the repository root)");
            }
            return dir;
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("test-peers");
            if (Files.isRegularFile(candidate.resolve("package.json"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("test-peers directory not found: system property mcpchaos.testPeers"
                + " is unset and no parent of " + Path.of("").toAbsolutePath()
                + " has test-peers/package.json (expected: run from inside the mcp-chaos repository)");
    }

    /**
     * Returns the Node binary to run peers with: {@code test-peers/node_modules/node/bin/node}
     * (the npm package {@code node@22}) when it is installed, otherwise {@code node} from the
     * {@code PATH}.
     *
     * @throws IllegalStateException if neither exists
     */
    public static Path node() {
        Path bundled = testPeersDir().resolve(NPM_NODE_BINARY);
        if (Files.isExecutable(bundled)) {
            return bundled;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                if (entry.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(entry, "node");
                if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                    return candidate.toAbsolutePath();
                }
            }
        }
        throw new IllegalStateException("node not found: neither " + bundled + " nor `node` on PATH="
                + path + " (expected: Node >= 20 on the PATH, or node@22 in test-peers; run: "
                + installHint() + ")");
    }

    /** The command that installs the peers, quoted in every "not installed" message. */
    private static String installHint() {
        return "cd " + testPeersDir() + " && npm ci --no-audit --no-fund";
    }

    /**
     * Returns {@code .../server-everything/dist/index.js}.
     *
     * @throws IllegalStateException if the npm package is not installed
     */
    public static Path serverEverythingEntry() {
        Path entry = testPeersDir().resolve(SERVER_EVERYTHING_ENTRY);
        if (!Files.isRegularFile(entry)) {
            throw new IllegalStateException("server-everything not installed: " + entry
                    + " is missing (run: " + installHint() + ")");
        }
        return entry;
    }

    /**
     * Returns the command that starts server-everything on stdio:
     * {@code [node, .../dist/index.js, stdio]}.
     */
    public static List<String> serverEverythingStdioCommand() {
        return List.of(node().toString(), serverEverythingEntry().toString(), "stdio");
    }

    /**
     * Returns the shaded mcp-chaos jar named by the system property {@code mcpchaos.jar}.
     *
     * @throws IllegalStateException if the property is unset or the jar has not been built
     */
    public static Path mcpChaosJar() {
        String configured = System.getProperty("mcpchaos.jar");
        if (configured == null || configured.isBlank()) {
            throw new IllegalStateException("system property mcpchaos.jar is unset"
                    + " (expected: run through failsafe, `mvn -B verify`, which sets it to"
                    + " mcp-chaos-cli/target/mcp-chaos.jar)");
        }
        Path jar = Path.of(configured).toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("mcp-chaos jar not found: " + jar
                    + " (run: mvn -B -pl mcp-chaos-cli -am package -DskipTests)");
        }
        return jar;
    }

    /**
     * Returns the {@code java} binary of the running JVM, so child proxies run on the same
     * JDK as the test.
     *
     * @throws IllegalStateException if the JVM does not report its command
     */
    public static Path java() {
        return ProcessHandle.current().info().command()
                .map(Path::of)
                .filter(Files::isExecutable)
                .orElseThrow(() -> new IllegalStateException(
                        "java binary of the running JVM unknown (ProcessHandle.current().info().command() is empty)"));
    }

    /**
     * Returns an official-SDK client spec, not yet built, that starts {@code command} as a
     * child process and speaks MCP over its stdin/stdout. Add consumers, then {@code build()}:
     *
     * <pre>{@code
     * McpSyncClient client = TestPeers.stdioClient(command, stderr::add)
     *         .progressConsumer(progress::add)
     *         .toolsChangeConsumer(tools -> toolsChanged.countDown())
     *         .build();
     * }</pre>
     *
     * <p>SDK 2.1.0 notes: the JSON mapper comes from {@link McpJsonDefaults#getMapper()}
     * (found by ServiceLoader in {@code mcp-json-jackson3}); progress notifications reach the
     * consumers registered on the spec, not a per-call callback, so a test tells calls apart by
     * progress token; {@code closeGracefully()} sends SIGTERM to the direct child only.
     *
     * @param command the program and its arguments, run as is (no shell)
     * @param stderr receives the child's stderr line by line, on an SDK thread
     */
    public static McpClient.SyncSpec stdioClient(List<String> command, Consumer<String> stderr) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command: [] (expected: a program and its arguments)");
        }
        ServerParameters params = ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size()))
                .build();
        StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(stderr);
        return McpClient.sync(transport)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-it", "0.0.0").build())
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT);
    }
}
