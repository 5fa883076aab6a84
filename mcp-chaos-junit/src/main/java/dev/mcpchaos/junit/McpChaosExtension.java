package dev.mcpchaos.junit;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.junit.internal.StdioClientSide;
import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.journal.Journal;
import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.ChildJvm;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.RunningProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.demo.DemoServer;
import dev.mcpchaos.server.host.McpHttpHost;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.replay.HttpReplay;
import dev.mcpchaos.server.replay.OnExhausted;
import dev.mcpchaos.server.replay.StdioReplay;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.platform.commons.support.AnnotationSupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A JUnit 5 extension that runs an mcp-chaos proxy in this JVM for the tests of a class: declared
 * with {@link McpChaosTest @McpChaosTest}, or registered in code:
 *
 * <pre>{@code
 * @RegisterExtension
 * static McpChaosExtension proxy = McpChaosExtension.http(URI.create("http://127.0.0.1:3001/mcp"))
 *         .rules("/chaos/flaky.yaml");
 *
 * @Test
 * void retriesAfterALostAnswer() {
 *     proxy.chaos().add(Rules.drop("lose-answer").onMethod("tools/call").onResponses().times(1));
 *     // an MCP client on proxy.mcpUrl() ...
 * }
 * }</pre>
 *
 * <p>Before each test: the rules go back to those the proxy started with (rules a test added are
 * gone), faults on, counters at 0 ({@link Chaos#reset()}), the journal is emptied (so
 * {@code journal().verify()} sees this test's traffic only), and the proxy draws from the test's
 * seed: the one given ({@link #seed}, {@link McpChaosTest#seed()}), else one derived from the
 * test's unique id, the same on every run. {@code -Dmcpchaos.seed=N} (a system property or JUnit
 * configuration parameter) overrides both. When a test fails, its seed is printed on stderr and
 * added to the failure (as a suppressed exception) with how to repeat it.
 *
 * <p>Tests get the proxy as a parameter of type {@link ChaosProxy},
 * {@link dev.mcpchaos.server.RunningProxy} or {@link Chaos}, or from the extension itself
 * ({@link #proxy()}, {@link #mcpUrl()}, {@link #chaos()}). A {@code static} field gives one proxy
 * per class ({@link Lifecycle#PER_CLASS}, the default, unless {@link #perTest()}); an instance
 * field, one per test. Tests of one extension must not run concurrently.
 *
 * <p>Virtual time is not offered: faults delay messages on the proxy's Netty event loops, whose
 * clock a test cannot drive safely while real peers exchange messages in real time.
 */
public final class McpChaosExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback, ParameterResolver, TestExecutionExceptionHandler {

    /** The system property (or JUnit configuration parameter) that fixes the seed of every test, to repeat a run. */
    public static final String SEED_PROPERTY = "mcpchaos.seed";

    private enum Kind { STDIO, HTTP, DEMO_STDIO, DEMO_HTTP, REPLAY_STDIO, REPLAY_HTTP }

    private Kind kind;
    private List<String> command;
    private URI upstream;
    /** The cassettes a replayed server plays (read once; each start makes a fresh replay of them). */
    private List<Cassette> cassettes;
    private OnExhausted onExhausted = OnExhausted.LAST;
    private dev.mcpchaos.server.replay.Timing timing = dev.mcpchaos.server.replay.Timing.NONE;
    private dev.mcpchaos.server.replay.Matching matching = dev.mcpchaos.server.replay.Matching.DEFAULT;
    private RuleSet rules;
    private Long seed;
    private Lifecycle lifecycle;
    private boolean control;
    private boolean resetBeforeEach = true;
    private final List<Consumer<ChaosBuilder<?>>> settings = new ArrayList<>();

    private ChaosProxy current;
    private boolean perClassStarted;
    /** How many classes deep beforeAll went (a @Nested class calls it again): the outermost owns the proxy. */
    private int classDepth;
    private long testSeed;
    private String testName;

    /**
     * Made by JUnit for {@link McpChaosTest @McpChaosTest}, which configures it. In code, use
     * {@link #stdio}, {@link #http}, {@link #demoStdio()}, {@link #demoHttp()}, {@link #replayStdio} or
     * {@link #replayHttp}.
     */
    public McpChaosExtension() {
    }

    private McpChaosExtension(Kind kind) {
        this.kind = kind;
    }

    /** A proxy on stdio that starts {@code command} as the MCP server. */
    public static McpChaosExtension stdio(List<String> command) {
        Objects.requireNonNull(command, "command");
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command: [] (expected: a program and its arguments)");
        }
        McpChaosExtension extension = new McpChaosExtension(Kind.STDIO);
        extension.command = List.copyOf(command);
        return extension;
    }

    /** A proxy on stdio that starts {@code command} as the MCP server. */
    public static McpChaosExtension stdio(String... command) {
        return stdio(Arrays.asList(command));
    }

    /** A proxy on HTTP in front of the Streamable HTTP MCP server at {@code upstream}. */
    public static McpChaosExtension http(URI upstream) {
        McpChaosExtension extension = new McpChaosExtension(Kind.HTTP);
        extension.upstream = Objects.requireNonNull(upstream, "upstream");
        return extension;
    }

    /** A proxy on stdio in front of the built-in demo server (a child process). */
    public static McpChaosExtension demoStdio() {
        return new McpChaosExtension(Kind.DEMO_STDIO);
    }

    /** A proxy on HTTP in front of the built-in demo server (in this JVM, on a free loopback port). */
    public static McpChaosExtension demoHttp() {
        return new McpChaosExtension(Kind.DEMO_HTTP);
    }

    /**
     * A proxy on stdio in front of the server recorded in these cassettes (classpath resources,
     * such as {@code /cassettes/everything.ndjson}, made by {@code mcp-chaos stdio --record}),
     * replayed in this JVM: no real server. Repeats of a request are served in recorded order,
     * then the last one again; with one proxy per class that order goes on across its tests
     * ({@link #perTest()} replays afresh for each). A request with no recording gets a JSON-RPC
     * error {@code -32601} and is counted in {@link ChaosProxy#unmatchedRequests()}.
     *
     * @throws IllegalArgumentException when a resource is missing or not a cassette
     */
    public static McpChaosExtension replayStdio(String... cassetteResources) {
        return replaying(Kind.REPLAY_STDIO, readResources(cassetteResources, McpChaosExtension.class));
    }

    /** {@link #replayStdio(String...)} from cassette files. */
    public static McpChaosExtension replayStdio(Path... cassetteFiles) {
        return replaying(Kind.REPLAY_STDIO, readFiles(cassetteFiles));
    }

    /**
     * A proxy on HTTP in front of the server recorded in these cassettes (classpath resources),
     * replayed over Streamable HTTP in this JVM on a free loopback port; as
     * {@link #replayStdio(String...)} otherwise.
     */
    public static McpChaosExtension replayHttp(String... cassetteResources) {
        return replaying(Kind.REPLAY_HTTP, readResources(cassetteResources, McpChaosExtension.class));
    }

    /** {@link #replayHttp(String...)} from cassette files. */
    public static McpChaosExtension replayHttp(Path... cassetteFiles) {
        return replaying(Kind.REPLAY_HTTP, readFiles(cassetteFiles));
    }

    private static McpChaosExtension replaying(Kind kind, List<Cassette> cassettes) {
        McpChaosExtension extension = new McpChaosExtension(kind);
        extension.cassettes = cassettes;
        return extension;
    }

    /**
     * The proxy starts with the rules of this classpath resource (YAML, or JSON for {@code .json}),
     * such as {@code /chaos/rules.yaml}; {@link Chaos#reset()} goes back to them.
     *
     * @throws RuleFileException when the resource is missing or not a valid rule file
     */
    public McpChaosExtension rules(String classpathResource) {
        this.rules = load(classpathResource, McpChaosExtension.class);
        return this;
    }

    /** The proxy starts with the rules of this file. */
    public McpChaosExtension rules(Path file) {
        this.rules = RuleSet.load(file);
        return this;
    }

    /** The proxy starts with these rules. */
    public McpChaosExtension rules(RuleSet rules) {
        this.rules = Objects.requireNonNull(rules, "rules");
        return this;
    }

    /**
     * For a replay: what to answer once a request's recordings are used up (default
     * {@link OnExhausted#LAST}: the last one again).
     */
    public McpChaosExtension onExhausted(OnExhausted whenUsedUp) {
        this.onExhausted = Objects.requireNonNull(whenUsedUp, "whenUsedUp");
        return replayOnly("onExhausted");
    }

    /** For a replay: when answers go (default {@code Timing.NONE}: at once; {@code Timing.RECORDED}, {@code scaled(F)}). */
    public McpChaosExtension timing(dev.mcpchaos.server.replay.Timing pace) {
        this.timing = Objects.requireNonNull(pace, "pace");
        return replayOnly("timing");
    }

    /** For a replay: how requests are matched to recordings (default {@code Matching.DEFAULT}). */
    public McpChaosExtension matching(dev.mcpchaos.server.replay.Matching how) {
        this.matching = Objects.requireNonNull(how, "how");
        return replayOnly("matching");
    }

    private McpChaosExtension replayOnly(String setting) {
        if (kind != Kind.REPLAY_STDIO && kind != Kind.REPLAY_HTTP) {
            throw new IllegalStateException(setting + ": only for a replayed server (expected: "
                    + "McpChaosExtension.replayHttp(...) or .replayStdio(...) first)");
        }
        return this;
    }

    /** Every test draws from this seed (unless {@code -Dmcpchaos.seed}); default: each test's own. */
    public McpChaosExtension seed(long seed) {
        this.seed = seed;
        return this;
    }

    /** A new proxy for each test (on stdio: a new server process). */
    public McpChaosExtension perTest() {
        this.lifecycle = Lifecycle.PER_TEST;
        return this;
    }

    /** One proxy for the class, reset before each test (the default for a static field). */
    public McpChaosExtension perClass() {
        this.lifecycle = Lifecycle.PER_CLASS;
        return this;
    }

    /** Serves the control API on a free loopback port ({@link ChaosProxy#controlUrl()}). */
    public McpChaosExtension withControl() {
        this.control = true;
        return this;
    }

    /**
     * Whether the rules are reset and the test's seed given before each test (default true). With
     * {@code false} and one proxy per class, a test meets the rules (and counters) the test before
     * left, and draws on from the class's seed.
     */
    public McpChaosExtension resetBeforeEach(boolean reset) {
        this.resetBeforeEach = reset;
        return this;
    }

    /** Any other setting of the proxy's builder, such as {@code b -> b.logTraffic(200)}. */
    public McpChaosExtension configure(Consumer<ChaosBuilder<?>> setting) {
        settings.add(Objects.requireNonNull(setting, "setting"));
        return this;
    }

    // ---- for the test ----

    /**
     * The proxy of the test running now.
     *
     * @throws IllegalStateException outside a test (or before the class's proxy started)
     */
    public ChaosProxy proxy() {
        if (current == null) {
            throw new IllegalStateException("proxy(): no proxy is running (expected: a call from a test, or from "
                    + "@BeforeEach / @AfterEach, of a class this extension is registered on)");
        }
        return current;
    }

    /** {@link #proxy()}'s {@link ChaosProxy#mcpUrl()}. */
    public URI mcpUrl() {
        return proxy().mcpUrl();
    }

    /** {@link #proxy()}'s {@link ChaosProxy#chaos()}. */
    public Chaos chaos() {
        return proxy().chaos();
    }

    /** {@link #proxy()}'s {@link ChaosProxy#journal()}: what passed through in this test, and {@code verify()}. */
    public Journal journal() {
        return proxy().journal();
    }

    /** {@link #proxy()}'s {@link ChaosProxy#seed()}: the test's seed. */
    public long seed() {
        return proxy().seed();
    }

    /** {@link #proxy()}'s {@link ChaosProxy#stdioClientCommand()}. */
    public List<String> stdioClientCommand() {
        return proxy().stdioClientCommand();
    }

    /**
     * The seed a test gets when none is given: a stable 64-bit hash (FNV-1a) of its unique id,
     * not negative, so the same test has the same seed on every run and machine.
     */
    public static long seedFor(String uniqueId) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : uniqueId.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash & Long.MAX_VALUE;
    }

    // ---- JUnit callbacks ----

    @Override
    public void beforeAll(ExtensionContext context) {
        configureFrom(context);
        if (classDepth++ == 0 && effectiveLifecycle() == Lifecycle.PER_CLASS) {
            current = start(seedOf(context));
            perClassStarted = true;
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        configureFrom(context);
        testSeed = seedOf(context);
        testName = context.getDisplayName();
        if (perClassStarted) {
            if (resetBeforeEach) {
                current.rules().reset("before " + context.getUniqueId(), testSeed);
                clearJournal(current);
            } else {
                testSeed = current.seed(); // the rules, their counters and draws go on from the test before
            }
        } else {
            current = start(testSeed);
        }
    }

    /** Empties the journal, when the proxy keeps one, so that a test verifies its own traffic only. */
    private static void clearJournal(ChaosProxy proxy) {
        Journal journal;
        try {
            journal = proxy.journal();
        } catch (IllegalStateException off) {
            return; // built with journal(0)
        }
        journal.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!perClassStarted && current != null) {
            ChaosProxy proxy = current;
            current = null;
            proxy.close();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (--classDepth == 0 && perClassStarted) {
            ChaosProxy proxy = current;
            current = null;
            perClassStarted = false;
            proxy.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == ChaosProxy.class || type == RunningProxy.class || type == Chaos.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        if (current == null) {
            throw new ParameterResolutionException(parameter.getParameter() + ": no proxy is running yet (expected: "
                    + "a parameter of a test or of @BeforeEach; with a proxy per class, of @BeforeAll too)");
        }
        return parameter.getParameter().getType() == Chaos.class ? current.chaos() : current;
    }

    /** Adds the seed and how to repeat the test to its failure, and prints them on stderr. */
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        String note = failureNote(context.getDisplayName(), testSeed);
        System.err.println(note);
        failure.addSuppressed(new SeedNote(note));
        throw failure;
    }

    /** What a failed test prints. */
    static String failureNote(String test, long seed) {
        return "mcp-chaos: " + test + " failed with seed " + seed + "; to repeat it with the same chaos: -D"
                + SEED_PROPERTY + "=" + seed + " (or @McpChaosTest(seed = " + seed + "L), McpChaosExtension..."
                + ".seed(" + seed + "L))";
    }

    /** The seed of a failed test, as a suppressed exception of its failure: shown with the failure in every report. */
    static final class SeedNote extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SeedNote(String message) {
            super(message, null, false, false);
        }
    }

    // ---- internals ----

    private Lifecycle effectiveLifecycle() {
        return lifecycle != null ? lifecycle : Lifecycle.PER_CLASS;
    }

    /** From {@link McpChaosTest} when JUnit made this extension for it. */
    private void configureFrom(ExtensionContext context) {
        if (kind != null) {
            return;
        }
        Optional<McpChaosTest> found = context.getTestClass()
                .flatMap(c -> AnnotationSupport.findAnnotation(c, McpChaosTest.class));
        McpChaosTest a = found.orElseThrow(() -> new ExtensionConfigurationException("McpChaosExtension: no "
                + "@McpChaosTest on " + context.getTestClass().map(Class::getName).orElse("the test")
                + " (expected: @McpChaosTest(...), or a field made by McpChaosExtension.http(...) / .stdio(...))"));
        int given = (a.stdio().length > 0 ? 1 : 0) + (a.http().isEmpty() ? 0 : 1)
                + (a.demo() == McpChaosTest.Demo.NONE ? 0 : 1) + (a.replay().length > 0 ? 1 : 0);
        if (given != 1) {
            throw new ExtensionConfigurationException("@McpChaosTest on " + context.getRequiredTestClass().getName()
                    + ": " + (given == 0 ? "no upstream" : "more than one upstream") + " (expected: exactly one of "
                    + "stdio = {\"command\", \"arg\"}, http = \"http://127.0.0.1:3001/mcp\", demo = Demo.HTTP, "
                    + "replay = \"/cassettes/server.ndjson\")");
        }
        if (a.replay().length > 0) {
            kind = a.replayOver() == TransportKind.STDIO ? Kind.REPLAY_STDIO : Kind.REPLAY_HTTP;
            try {
                cassettes = readResources(a.replay(), context.getRequiredTestClass());
            } catch (IllegalArgumentException e) {
                throw new ExtensionConfigurationException("@McpChaosTest(replay = ...) on "
                        + context.getRequiredTestClass().getName() + ": " + e.getMessage(), e);
            }
            onExhausted = a.replayOnExhausted();
            matching = dev.mcpchaos.server.replay.Matching.of(a.replayMatch(), List.of());
            try {
                timing = dev.mcpchaos.server.replay.Timing.parse(a.replayTiming());
            } catch (IllegalArgumentException e) {
                throw new ExtensionConfigurationException("@McpChaosTest(replayTiming = \"" + a.replayTiming()
                        + "\") on " + context.getRequiredTestClass().getName() + ": " + e.getMessage(), e);
            }
        } else if (a.stdio().length > 0) {
            kind = Kind.STDIO;
            command = List.of(a.stdio());
        } else if (!a.http().isEmpty()) {
            kind = Kind.HTTP;
            try {
                upstream = URI.create(a.http());
            } catch (IllegalArgumentException e) {
                throw new ExtensionConfigurationException("@McpChaosTest(http = \"" + a.http() + "\"): not a URL "
                        + "(expected: such as http://127.0.0.1:3001/mcp)", e);
            }
        } else {
            kind = a.demo() == McpChaosTest.Demo.STDIO ? Kind.DEMO_STDIO : Kind.DEMO_HTTP;
        }
        if (!a.rules().isEmpty()) {
            rules = load(a.rules(), context.getRequiredTestClass());
        }
        if (a.seed() != McpChaosTest.NO_SEED) {
            seed = a.seed();
        }
        lifecycle = a.lifecycle();
        control = a.control();
        resetBeforeEach = a.resetBeforeEach();
    }

    private long seedOf(ExtensionContext context) {
        Optional<String> fixed = context.getConfigurationParameter(SEED_PROPERTY);
        if (fixed.isPresent()) {
            try {
                return Long.parseLong(fixed.get().trim());
            } catch (NumberFormatException e) {
                throw new ExtensionConfigurationException(SEED_PROPERTY + ": '" + fixed.get() + "' (expected: a whole "
                        + "number, such as -D" + SEED_PROPERTY + "=42)", e);
            }
        }
        return seed != null ? seed : seedFor(context.getUniqueId());
    }

    private ChaosProxy start(long runSeed) {
        AutoCloseable upstreamServer = null;
        StdioClientSide stdio = null;
        try {
            RunningProxy running;
            java.util.function.LongSupplier unmatched = null;
            switch (kind) {
                case REPLAY_STDIO: {
                    stdio = new StdioClientSide();
                    StdioReplay replay = new StdioReplay(cassettes, onExhausted, timing, matching);
                    unmatched = replay::unmatched;
                    McpChaosProxy.StdioBuilder b = McpChaosProxy.replay(replay)
                            .clientInput(stdio.proxyInput())
                            .clientOutput(stdio.proxyOutput());
                    apply(b, runSeed);
                    running = b.start();
                    break;
                }
                case REPLAY_HTTP: {
                    HttpReplay replay = new HttpReplay(cassettes, onExhausted, timing, matching);
                    unmatched = replay::unmatched;
                    HttpProxyBuilder b = McpChaosProxy.replay(replay);
                    apply(b, runSeed);
                    running = b.start();
                    break;
                }
                case STDIO:
                case DEMO_STDIO: {
                    stdio = new StdioClientSide();
                    McpChaosProxy.StdioBuilder b = McpChaosProxy.stdio(kind == Kind.STDIO ? command : demoCommand())
                            .clientInput(stdio.proxyInput())
                            .clientOutput(stdio.proxyOutput());
                    apply(b, runSeed);
                    running = b.start();
                    break;
                }
                default: {
                    URI target = upstream;
                    if (kind == Kind.DEMO_HTTP) {
                        McpHttpHost demo = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
                        upstreamServer = demo;
                        target = URI.create("http://127.0.0.1:" + demo.address().getPort() + McpHttpHost.PATH);
                    }
                    HttpProxyBuilder b = McpChaosProxy.http(target);
                    apply(b, runSeed);
                    running = b.start();
                }
            }
            return new ChaosProxy(running, stdio, upstreamServer, unmatched);
        } catch (IOException e) {
            closeQuietly(stdio);
            throw new UncheckedIOException("cannot start the built-in demo server: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(stdio);
            closeQuietly(upstreamServer);
            throw e;
        }
    }

    private void apply(ChaosBuilder<?> builder, long runSeed) {
        if (rules != null) {
            builder.rules(rules);
        }
        builder.seed(runSeed);
        if (control) {
            builder.control(new InetSocketAddress("127.0.0.1", 0));
        }
        settings.forEach(setting -> setting.accept(builder));
    }

    /**
     * The built-in demo server as a child process: this JVM's java and class path, {@link DemoServer}'s
     * main (the library's, not the command line's {@code demo-server}: a test's class path has no CLI).
     */
    private static List<String> demoCommand() {
        return ChildJvm.command(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                DemoServer.class.getName());
    }

    private static RuleSet load(String resource, Class<?> anchor) {
        Objects.requireNonNull(resource, "resource");
        String path = resource.startsWith("/") ? resource : "/" + resource;
        try (InputStream in = anchor.getResourceAsStream(path)) {
            if (in == null) {
                throw new RuleFileException(resource, null, "no such resource on the class path (expected: a rule "
                        + "file such as src/test/resources" + path + ")");
            }
            return RuleSet.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), resource);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    private static List<Cassette> readResources(String[] resources, Class<?> anchor) {
        List<Cassette> read = new ArrayList<>();
        for (String resource : resources) {
            Objects.requireNonNull(resource, "cassette resource");
            String path = resource.startsWith("/") ? resource : "/" + resource;
            try (InputStream in = anchor.getResourceAsStream(path)) {
                if (in == null) {
                    throw new IllegalArgumentException("cassette " + resource + ": no such resource on the class path "
                            + "(expected: a cassette recorded with mcp-chaos --record, such as src/test/resources" + path
                            + ")");
                }
                read.add(Cassette.read(new java.io.InputStreamReader(in, StandardCharsets.UTF_8), resource));
            } catch (CassetteException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + resource, e);
            }
        }
        return requireSome(read);
    }

    private static List<Cassette> readFiles(Path[] files) {
        List<Cassette> read = new ArrayList<>();
        for (Path file : files) {
            try {
                read.add(Cassette.read(Objects.requireNonNull(file, "cassette file")));
            } catch (CassetteException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } catch (IOException e) {
                throw new IllegalArgumentException("cassette " + file + ": cannot be read: " + e.getMessage()
                        + " (expected: a cassette file)", e);
            }
        }
        return requireSome(read);
    }

    private static List<Cassette> requireSome(List<Cassette> read) {
        if (read.isEmpty()) {
            throw new IllegalArgumentException("cassettes: none given (expected: at least one)");
        }
        return List.copyOf(read);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // already failing: the first failure is the one to report
            }
        }
    }

    @Override
    public String toString() {
        return "McpChaosExtension(" + kind + ", " + (testName == null ? "no test yet" : testName) + ')';
    }
}
