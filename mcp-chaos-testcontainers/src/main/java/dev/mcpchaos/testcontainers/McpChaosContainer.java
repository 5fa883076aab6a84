package dev.mcpchaos.testcontainers;

import dev.mcpchaos.rules.Chaos;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * The mcp-chaos HTTP proxy ({@code deploy/docker}) as a Testcontainers container, in front of an
 * MCP server: clients connect to {@link #getMcpUrl()}, the proxy relays to
 * {@link #withUpstream(String) the upstream} and breaks the messages its rules say.
 *
 * <pre>{@code
 * try (McpChaosContainer chaos = new McpChaosContainer("mcp-chaos:0.1.0")
 *         .withUpstream("http://127.0.0.1:3001/mcp")
 *         .withRules("rules:\n  - name: slow\n    match: {tool: search}\n    fault: {type: latency, latency: 300ms}\n")
 *         .withSeed(42)
 *         .withNetworkMode("host")
 *         .withListenPort(18080)
 *         .withControlPort(19090)) {
 *     chaos.start();
 *     URI mcp = chaos.getMcpUrl(); // http://127.0.0.1:18080/mcp
 * }
 * }</pre>
 *
 * <h2>Networks</h2>
 * <ul>
 *   <li><b>Host networking</b> ({@code withNetworkMode("host")}): the proxy listens on the host's
 *       127.0.0.1, on {@link #withListenPort(int)} and {@link #withControlPort(int)} (choose free
 *       ports: nothing is mapped), and an upstream on the host is reached at 127.0.0.1.</li>
 *   <li><b>A bridge network</b> (the default, or {@code withNetwork(network)} with
 *       {@code withNetworkAliases("chaos")}): the proxy listens on 0.0.0.0:8080 inside the
 *       container, mapped to a random host port; other containers of the network reach it at
 *       {@link #getNetworkMcpUrl()} ({@code http://chaos:8080/mcp}), and the upstream can be
 *       another container by its alias ({@code http://server:3001/mcp}). The control API then
 *       listens beyond loopback, which needs a token: give one with
 *       {@link #withControlToken(String)}, or one is generated; {@link #getControlToken()}.</li>
 * </ul>
 *
 * <p>The container is started once {@code GET /health} of the control API answers 200.
 *
 * <p>While it runs, {@link #chaos()} changes its rules as the embedded proxy's {@code chaos()}
 * does, over the control API: {@code chaos().add(Rules.latency("slow", ofMillis(300)).onTool("echo"))},
 * {@code remove()}, the panic switch, {@code reset()}.
 */
public class McpChaosContainer extends GenericContainer<McpChaosContainer> {

    /** The image's name without a tag, as {@code deploy/docker/build-image.sh} builds it. */
    public static final String IMAGE = "mcp-chaos";

    /** Where clients connect inside the container, on a bridge network. */
    public static final int MCP_PORT = 8080;

    /** Where the control API listens inside the container, on a bridge network. */
    public static final int CONTROL_PORT = 9090;

    /** Where rules given to {@code withRules...} are copied in the container. */
    static final String RULES_DIRECTORY = "/tmp/mcp-chaos-rules/";

    private URI upstream;
    private int listenPort = MCP_PORT;
    private int controlPort = CONTROL_PORT;
    private String controlToken;
    /** The rules given to {@code withRules...}, what {@code chaos().reset()} goes back to; null for none. */
    private String startingRules;
    /** The alias Testcontainers gives every container ({@code tc-...}), not one a user chose. */
    private final List<String> generatedAliases;

    /** The container of {@code image}, such as {@code "mcp-chaos:0.1.0"}. */
    public McpChaosContainer(String image) {
        this(DockerImageName.parse(image));
    }

    /** The container of {@code image}, an image built by {@code deploy/docker/build-image.sh} or one like it. */
    public McpChaosContainer(DockerImageName image) {
        super(image);
        generatedAliases = List.copyOf(getNetworkAliases());
        waitingFor(new HealthWaitStrategy().withStartupTimeout(Duration.ofSeconds(60)));
    }

    /**
     * The MCP server to relay to: an {@code http://} or {@code https://} URL with the endpoint's
     * path, such as {@code http://127.0.0.1:3001/mcp} (with host networking) or
     * {@code http://server:3001/mcp} (another container of the same network). Clients use the
     * same path on the proxy: paths pass unchanged.
     *
     * @throws IllegalArgumentException for a URL that is not http or https with a host
     */
    public McpChaosContainer withUpstream(String url) {
        Objects.requireNonNull(url, "url");
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("upstream: '" + url + "' (expected: an http:// or https:// URL)", e);
        }
        if (uri.getScheme() == null || !List.of("http", "https").contains(uri.getScheme().toLowerCase(java.util.Locale.ROOT))
                || uri.getHost() == null) {
            throw new IllegalArgumentException("upstream: '" + url
                    + "' (expected: an http:// or https:// URL with a host, such as http://127.0.0.1:3001/mcp)");
        }
        this.upstream = uri;
        return withEnv("MCP_CHAOS_UPSTREAM", url);
    }

    /** Rules in YAML (or JSON) text, as in a rule file ({@code docs/rules.md}); copied into the container. */
    public McpChaosContainer withRules(String rules) {
        Objects.requireNonNull(rules, "rules");
        return withRulesFile("rules.yaml", rules.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Rules from a file on this machine, copied into the container. A name ending in
     * {@code .json} is read as JSON, any other as YAML.
     *
     * @throws UncheckedIOException when the file cannot be read
     */
    public McpChaosContainer withRulesFromFile(Path file) {
        Objects.requireNonNull(file, "file");
        try {
            return withRulesFile(fileName(file.getFileName().toString()), Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("rules: cannot read " + file, e);
        }
    }

    /**
     * Rules from a resource of this thread's class loader (such as {@code "rules/slow.yaml"}),
     * copied into the container.
     *
     * @throws IllegalArgumentException when there is no such resource
     */
    public McpChaosContainer withRulesFromClasspath(String resource) {
        Objects.requireNonNull(resource, "resource");
        String name = resource.startsWith("/") ? resource.substring(1) : resource;
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try (InputStream in = (loader != null ? loader : McpChaosContainer.class.getClassLoader()).getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalArgumentException("rules: no classpath resource '" + resource + "'");
            }
            return withRulesFile(fileName(name.substring(name.lastIndexOf('/') + 1)), in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("rules: cannot read classpath resource " + resource, e);
        }
    }

    private static String fileName(String name) {
        return name.toLowerCase(java.util.Locale.ROOT).endsWith(".json") ? "rules.json" : "rules.yaml";
    }

    private McpChaosContainer withRulesFile(String name, byte[] content) {
        String path = RULES_DIRECTORY + name;
        startingRules = new String(content, StandardCharsets.UTF_8);
        // Readable by the image's non-root user.
        withCopyToContainer(Transferable.of(content, 0644), path);
        return withEnv("MCP_CHAOS_RULES", path);
    }

    /** The seed of every random choice the rules make, so a run can be repeated. */
    public McpChaosContainer withSeed(long seed) {
        return withEnv("MCP_CHAOS_SEED", Long.toString(seed));
    }

    /**
     * The port clients connect to with host networking (default {@value #MCP_PORT}); on a bridge
     * network the proxy listens on {@value #MCP_PORT} in the container and this is not used.
     */
    public McpChaosContainer withListenPort(int port) {
        this.listenPort = checkPort("listen port", port);
        return self();
    }

    /** The control API's port with host networking (default {@value #CONTROL_PORT}); see {@link #withListenPort(int)}. */
    public McpChaosContainer withControlPort(int port) {
        this.controlPort = checkPort("control port", port);
        return self();
    }

    /**
     * The control API's bearer token (every request but {@code GET /health} must carry it). Needed
     * on a bridge network, where the control API listens beyond loopback; generated there when
     * not given.
     */
    public McpChaosContainer withControlToken(String token) {
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("control token: '" + token + "' (expected: a non-blank string)");
        }
        this.controlToken = token;
        return self();
    }

    private static int checkPort(String what, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(what + ": " + port + " (expected: 1 to 65535)");
        }
        return port;
    }

    /** Whether the container shares the host's network ({@code withNetworkMode("host")}). */
    public boolean isHostNetwork() {
        return "host".equals(getNetworkMode());
    }

    @Override
    protected void configure() {
        if (upstream == null) {
            throw new IllegalStateException("McpChaosContainer: no upstream (expected: withUpstream(url) before start)");
        }
        if (isHostNetwork()) {
            // Nothing is mapped with host networking: listen on the host's loopback only.
            withEnv("MCP_CHAOS_LISTEN", "127.0.0.1:" + listenPort);
            withEnv("MCP_CHAOS_CONTROL", "127.0.0.1:" + controlPort);
            // The image's operations listener would take the host's port 9464: off unless asked for.
            if (!getEnvMap().containsKey("MCP_CHAOS_METRICS_LISTEN")) {
                withEnv("MCP_CHAOS_METRICS_LISTEN", "off");
            }
        } else {
            if (controlToken == null) {
                controlToken = UUID.randomUUID().toString();
            }
            withEnv("MCP_CHAOS_LISTEN", "0.0.0.0:" + MCP_PORT);
            withEnv("MCP_CHAOS_CONTROL", "0.0.0.0:" + CONTROL_PORT);
            withExposedPorts(MCP_PORT, CONTROL_PORT);
        }
        if (controlToken != null) {
            withEnv("MCP_CHAOS_CONTROL_TOKEN", controlToken);
        }
        // A test reads journal(): on, as in the builders (the command line's default is off).
        if (!getEnvMap().containsKey("MCP_CHAOS_JOURNAL")) {
            withEnv("MCP_CHAOS_JOURNAL", "10000");
        }
    }

    /** The upstream endpoint's path, which clients use on the proxy too ({@code /} when it has none). */
    private String path() {
        String path = upstream == null ? null : upstream.getRawPath();
        return path == null || path.isEmpty() ? "/" : path;
    }

    /** Where MCP clients on this machine connect, such as {@code http://127.0.0.1:18080/mcp}. */
    public URI getMcpUrl() {
        return URI.create(baseUrl(listenPort, MCP_PORT) + path());
    }

    /** The control API's base URL for this machine, such as {@code http://127.0.0.1:19090} ({@code docs/control-api.md}). */
    public URI getControlUrl() {
        return URI.create(baseUrl(controlPort, CONTROL_PORT));
    }

    /**
     * Where other containers of this container's network connect: the first network alias given, port
     * {@value #MCP_PORT} and the upstream's path, such as {@code http://chaos:8080/mcp}.
     *
     * @throws IllegalStateException with host networking, or without a network alias
     */
    public URI getNetworkMcpUrl() {
        String alias = getNetworkAliases().stream().filter(a -> !generatedAliases.contains(a)).findFirst().orElse(null);
        if (isHostNetwork() || alias == null) {
            throw new IllegalStateException("McpChaosContainer: no network alias (expected: withNetwork(network)"
                    + ".withNetworkAliases(\"chaos\"), not host networking)");
        }
        return URI.create("http://" + alias + ":" + MCP_PORT + path());
    }

    /**
     * The proxy's journal, read over the control API ({@code GET /journal}) each time it is asked:
     * the same {@link dev.mcpchaos.rules.journal.Journal} and {@code verify()} as the embedded
     * proxy's (see {@code docs/journal.md}). Usable once the container has started.
     */
    public dev.mcpchaos.rules.journal.Journal journal() {
        return new ControlApiJournal(getControlUrl(), controlToken);
    }

    /** The control API's token, or null when there is none (host networking without {@link #withControlToken(String)}). */
    public String getControlToken() {
        return controlToken;
    }

    private String baseUrl(int hostPort, int containerPort) {
        return isHostNetwork()
                ? "http://127.0.0.1:" + hostPort
                : "http://" + getHost() + ":" + getMappedPort(containerPort);
    }

    /**
     * The proxy's rules to change while it runs, over its control API: the same {@link Chaos} as
     * the embedded proxy's ({@code dev.mcpchaos.rules.Rules} for rules in one line of Java);
     * {@link Chaos#reset()} goes back to the rules given to {@code withRules...}.
     *
     * @throws IllegalStateException before the container is started
     */
    public Chaos chaos() {
        if (!isRunning()) {
            throw new IllegalStateException("McpChaosContainer.chaos(): the container is not running (expected: "
                    + "start() first)");
        }
        return new ControlApiChaos(getControlUrl(), controlToken, startingRules);
    }
}
