package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.diff.ContractSource;
import dev.mcpchaos.server.host.McpHttpHost;
import dev.mcpchaos.server.replay.HttpReplay;
import dev.mcpchaos.server.replay.OnExhausted;
import dev.mcpchaos.server.replay.ReplayFile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a client command once per scenario and grades it from the journal: the drill behind
 * {@code mcp-chaos drill}. Each scenario gets a fresh demo server ({@link DemoHttpServer}) and a
 * fresh proxy in front of it with the scenario's rules, the seed and the journal on; the client
 * is invoked as the MCP conformance suite's client mode invokes it (the proxy's MCP URL as the
 * last argument, {@code MCP_CONFORMANCE_SCENARIO=<name>} in its environment), and stopped when it
 * outlives the timeout.
 *
 * <pre>{@code
 * Scorecard card = Drill.builder(List.of("node", "client.mjs"))
 *         .scenarios(List.of("answer-lost", "retry-after-503"))
 *         .timeout(Duration.ofSeconds(20)).seed(42).run();
 * System.err.print(card.table());
 * }</pre>
 *
 * <p>Over stdio ({@link #stdio}) the client gets a server command appended instead of a URL, as
 * a stdio client is configured: the CLI's own stdio proxy ({@code mcp-chaos stdio --rules ...
 * --journal-dump FILE -- mcp-chaos demo-server}) in front of the demo server. The client spawns
 * it; the proxy writes its journal to the dump file when the server has exited (the client
 * closed its stdin, or the server crashed), and the drill grades from that file (from all of them,
 * one journal, when the client started the command more than once: {@code StdioDumps}). A dump at exit,
 * not the control API: the proxy lives exactly as long as the client keeps it, so the last
 * messages of a run (those that decide "the session went on") would be lost between the
 * last poll and the proxy's exit; the file has them all.
 *
 * <p>A client in this JVM ({@link #inProcess}, what {@code McpChaosDrill} of mcp-chaos-junit
 * uses) is called with the proxy's MCP URL instead of being started, over HTTP.
 *
 * <p>The server is the demo server unless told otherwise: a running Streamable HTTP server
 * ({@link #upstream}), a stdio server command ({@link #server}) or a cassette replayed
 * ({@link #cassette}). Before the first scenario the drill asks that server's {@code tools/list}
 * once; a scenario whose fault hits calls of a tool the server does not list
 * ({@link Scenario#toolsNeeded()}) is {@link Outcome#NOT_APPLICABLE not applicable}, with the reason.
 *
 * <p>A drill runs the scenarios of one era ({@link #era}): the 2025 era (sessions) by default; the
 * 2026-07-28 era (stateless) with the demo server serving that revision too (a dual-era server,
 * {@link DemoHttpServer#start(InetSocketAddress, Duration, boolean)}, or over stdio
 * {@code demo-server --dual-era}) and the journal keeping each message's text (the 2026 graders read {@code _meta} and
 * {@code requestState} from it). A scenario that needs more is reported
 * {@link Outcome#NOT_BUILT not built}, one for another transport or era
 * {@link Outcome#NOT_APPLICABLE not applicable}, never run with a stub verdict.
 */
public final class Drill {

    /** The transport a drill drives unless told {@link #stdio}. */
    public static final TransportKind TRANSPORT = TransportKind.HTTP;

    /** The era a drill drives unless told {@link #era}. */
    public static final Era ERA = Era.SESSIONS;

    /** The environment variable that names the scenario to the client, as in the conformance suite. */
    public static final String SCENARIO_VARIABLE = "MCP_CONFORMANCE_SCENARIO";

    /** How long after the client exits the journal is read: what the proxy still relays is recorded. */
    private static final Duration SETTLE = Duration.ofMillis(200);

    private final List<String> command;
    private final InProcessClient inProcess;
    private List<String> scenarios;
    private Duration timeout = Duration.ofSeconds(30);
    private long seed;
    private Consumer<String> clientOutput = line -> { };
    private TransportKind transport = TRANSPORT;
    private List<String> cli;
    private Era era = ERA;
    /** The server under the scenarios, when not the demo: at most one of these three. */
    private URI upstream;
    private List<String> serverCommand;
    private Path cassette;
    /** The tools the server lists, asked once at the first run; null: the demo's (every scenario's tools). */
    private Set<String> serverTools;
    private boolean probed;

    private Drill(List<String> command, InProcessClient inProcess) {
        this.command = List.copyOf(command);
        this.inProcess = inProcess;
        if (this.command.isEmpty() && inProcess == null) {
            throw new IllegalArgumentException("command: empty (expected: the client command)");
        }
    }

    /** A drill of the client started by {@code command} (the server's URL is appended). */
    public static Drill builder(List<String> command) {
        return new Drill(Objects.requireNonNull(command, "command"), null);
    }

    /**
     * A client in this JVM, such as a Java client under test: called once per scenario with the
     * proxy's MCP URL, on a thread of its own. It does what the scenarios expect of a client
     * (initialize, {@code tools/list}, {@code tools/call}s, each bounded by a timeout of its own)
     * and returns; returning is exit code 0, throwing exit code 1, and outliving the drill's
     * timeout is being stopped (the thread is interrupted, and left behind if it does not end).
     */
    @FunctionalInterface
    public interface InProcessClient {
        /**
         * Runs the client once.
         *
         * @param scenario the scenario's name (what {@code MCP_CONFORMANCE_SCENARIO} carries for a command)
         * @param mcpUrl the proxy's MCP URL, in front of the demo server
         */
        void run(String scenario, URI mcpUrl) throws Exception;
    }

    /** A drill of a client in this JVM (HTTP only: it has no command to append a server command to). */
    public static Drill inProcess(InProcessClient client) {
        return new Drill(List.of(), Objects.requireNonNull(client, "client"));
    }

    /**
     * The scenarios to run, by name, in this order; by default every scenario the catalogue has
     * that this version can run on its transport and era.
     *
     * @throws IllegalArgumentException for a name the catalogue does not have
     */
    public Drill scenarios(List<String> names) {
        for (String name : names) {
            if (Catalogue.find(name).isEmpty()) {
                throw new IllegalArgumentException("scenario: '" + name + "' (expected: one of "
                        + Catalogue.all().stream().map(Scenario::name).toList() + ")");
            }
        }
        this.scenarios = names.isEmpty() ? null : List.copyOf(names);
        return this;
    }

    /** How long the client may run per scenario before it is stopped; default 30 s. */
    public Drill timeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: positive)");
        }
        this.timeout = timeout;
        return this;
    }

    /** The seed of the scenarios' rules; default 0. */
    public Drill seed(long seed) {
        this.seed = seed;
        return this;
    }

    /** Where the client's output (stdout and stderr, merged) goes, line by line; default nowhere. */
    public Drill clientOutput(Consumer<String> lines) {
        this.clientOutput = Objects.requireNonNull(lines, "lines");
        return this;
    }

    /**
     * Drives stdio: the client command gets a server command appended, {@code cli} followed by
     * {@code stdio --rules FILE --seed N --journal 10000 --journal-dump FILE -- } and {@code cli}
     * followed by {@code demo-server}.
     *
     * @param cli the command that runs this version's {@code mcp-chaos} (such as {@code java -cp
     *            mcp-chaos.jar dev.mcpchaos.server.cli.Main})
     */
    public Drill stdio(List<String> cli) {
        if (inProcess != null) {
            throw new IllegalStateException("a client in this JVM is drilled over HTTP only");
        }
        this.cli = List.copyOf(cli);
        if (this.cli.isEmpty()) {
            throw new IllegalArgumentException("cli: empty (expected: the command that runs mcp-chaos)");
        }
        this.transport = TransportKind.STDIO;
        return this;
    }

    /**
     * The era whose scenarios run: {@link Era#SESSIONS} (the default) or {@link Era#STATELESS},
     * the 2026-07-28 revision, over either transport: the demo server is then a dual-era one
     * ({@code demo-server --dual-era} over stdio), and the journal keeps each message's text.
     */
    public Drill era(Era era) {
        this.era = Objects.requireNonNull(era, "era");
        return this;
    }

    /** The era this drill drives: {@link Era#SESSIONS} unless told {@link #era}. */
    public Era era() {
        return era;
    }

    /**
     * Drills against the Streamable HTTP MCP server at {@code url} (such as
     * {@code http://127.0.0.1:3001/mcp}) instead of the demo server: a fresh proxy in front of it
     * per scenario, the same server throughout (its state carries over from one scenario to the
     * next). HTTP only.
     */
    public Drill upstream(URI url) {
        Objects.requireNonNull(url, "url");
        String scheme = String.valueOf(url.getScheme()).toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || url.getHost() == null) {
            throw new IllegalArgumentException("upstream: '" + url + "' (expected: an http:// or https:// URL)");
        }
        oneServer("upstream");
        this.upstream = url;
        return this;
    }

    /**
     * Drills against the stdio MCP server {@code command} starts instead of the demo server: the
     * client is given this mcp-chaos's stdio proxy in front of {@code command}, so each scenario
     * starts a fresh server. Stdio only (a stdio server has no URL to hand an HTTP client).
     */
    public Drill server(List<String> command) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("server: empty (expected: the server command)");
        }
        oneServer("server");
        this.serverCommand = List.copyOf(command);
        return this;
    }

    /**
     * Drills against the server recorded in {@code file} (a cassette, or a transcript), replayed
     * fresh per scenario: in this JVM over HTTP, by this mcp-chaos's {@code replay} over stdio. A
     * request the cassette has no recording for is answered with an error, as {@code replay} does.
     */
    public Drill cassette(Path file) {
        Objects.requireNonNull(file, "file");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("cassette: '" + file + "' (expected: a cassette file)");
        }
        oneServer("cassette");
        this.cassette = file;
        return this;
    }

    private void oneServer(String chosen) {
        if (upstream != null || serverCommand != null || cassette != null) {
            throw new IllegalArgumentException(chosen + ": one server only (expected: one of upstream, server, "
                    + "cassette, or none for the demo server)");
        }
    }

    /** What the scenarios run against, in words: the demo server, or the one given. */
    public String serverDescription() {
        if (upstream != null) {
            return "the server at " + upstream;
        }
        if (serverCommand != null) {
            return "the server '" + String.join(" ", serverCommand) + "'";
        }
        return cassette != null ? "the cassette " + cassette : "the demo server";
    }

    /** The transport this drill drives: {@link TransportKind#HTTP} unless told {@link #stdio}. */
    public TransportKind transport() {
        return transport;
    }

    /** The scenarios that would run, in order. */
    public List<Scenario> selected() {
        if (scenarios == null) {
            return Catalogue.all().stream().filter(s -> s.built() && s.appliesTo(transport, era)).toList();
        }
        return scenarios.stream().map(n -> Catalogue.find(n).orElseThrow()).toList();
    }

    /** Runs the client once per scenario and grades each run. */
    public Scorecard run() {
        checkServer();
        List<Verdict> verdicts = new ArrayList<>();
        Map<String, String> journals = new LinkedHashMap<>();
        for (Scenario scenario : selected()) {
            verdicts.add(run(scenario, journals));
        }
        return new Scorecard(seed, verdicts, journals);
    }

    /**
     * Runs the client on one scenario and grades it: a scorecard of one verdict (with its
     * journal), for a caller that reports scenario by scenario, such as one dynamic test each.
     *
     * @throws IllegalArgumentException for a name the catalogue does not have
     */
    public Scorecard run(String scenario) {
        Scenario s = Catalogue.find(scenario).orElseThrow(() -> new IllegalArgumentException("scenario: '"
                + scenario + "' (expected: one of " + Catalogue.all().stream().map(Scenario::name).toList() + ")"));
        checkServer();
        Map<String, String> journals = new LinkedHashMap<>();
        Verdict verdict = run(s, journals);
        return new Scorecard(seed, List.of(verdict), journals);
    }

    /** Runs one scenario and grades it; puts its journal (JSON) in {@code journals} when it ran. */
    private Verdict run(Scenario scenario, Map<String, String> journals) {
        if (!scenario.built()) {
            return new Verdict(scenario.name(), scenario.level(), Outcome.NOT_BUILT,
                    "not built yet: " + scenario.notBuilt(), List.of(), null, Duration.ZERO);
        }
        if (!scenario.appliesTo(transport, era)) {
            return new Verdict(scenario.name(), scenario.level(), Outcome.NOT_APPLICABLE, "it applies to "
                    + Catalogue.transports(scenario) + " in the " + Catalogue.eras(scenario) + " era; this run is "
                    + transport.name().toLowerCase(Locale.ROOT) + " in the " + era.label() + " era", List.of(), null,
                    Duration.ZERO);
        }
        String lacking = lacking(scenario);
        if (lacking != null) {
            return new Verdict(scenario.name(), scenario.level(), Outcome.NOT_APPLICABLE, lacking, List.of(), null,
                    Duration.ZERO);
        }
        try {
            return transport == TransportKind.STDIO ? runStdio(scenario, journals) : runHttp(scenario, journals);
        } catch (IOException e) {
            throw new UncheckedIOException("scenario " + scenario.name() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during scenario " + scenario.name(), e);
        }
    }

    /**
     * The server fits the transport: an HTTP upstream is drilled over HTTP, a stdio server command
     * over stdio; a cassette and the demo server on either.
     */
    private void checkServer() {
        if (upstream != null && transport != TransportKind.HTTP) {
            throw new IllegalStateException("upstream: an HTTP server is drilled over http (expected: no stdio with "
                    + "an upstream URL)");
        }
        if (serverCommand != null && transport != TransportKind.STDIO) {
            throw new IllegalStateException("server: a stdio server command is drilled over stdio (expected: the "
                    + "stdio transport with a server command; an HTTP server is given by its upstream URL)");
        }
    }

    /**
     * Why {@code scenario} cannot run against this server, or null when it can: its rules fault a
     * {@code tools/call} (of a tool they name, or of any) and the server lists no such tool. The
     * server's {@code tools/list} is asked once, at the first scenario.
     */
    private String lacking(Scenario scenario) {
        Set<String> needs = scenario.toolsNeeded();
        if (needs.isEmpty()) {
            return null;
        }
        Set<String> tools = serverTools();
        if (tools == null) {
            return null;
        }
        for (String tool : needs) {
            if (tool.equals(Scenario.ANY_TOOL) && tools.isEmpty()) {
                return "its fault hits a tools/call, and " + serverDescription() + " lists no tool";
            }
            if (!tool.equals(Scenario.ANY_TOOL) && !tools.contains(tool)) {
                return "its fault hits tools/call of '" + tool + "', and " + serverDescription() + " has no tool '"
                        + tool + "' (its tools: " + String.join(", ", new TreeSet<>(tools)) + ")";
            }
        }
        return null;
    }

    /** The server's tools, asked once (null for the demo server, which has every tool a scenario names). */
    private Set<String> serverTools() {
        if (probed) {
            return serverTools;
        }
        probed = true;
        try {
            if (upstream != null) {
                serverTools = ContractSource.fromUrl(upstream, PROBE_TIMEOUT).tools().keySet();
            } else if (serverCommand != null) {
                serverTools = ContractSource.fromStdio(serverCommand, PROBE_TIMEOUT).tools().keySet();
            } else if (cassette != null) {
                serverTools = ContractSource.fromCassette(cassette).tools().keySet();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the server's tools/list: " + e.getMessage(), e);
        }
        if (serverTools != null) {
            serverTools = Set.copyOf(serverTools);
            clientOutput.accept("[drill] " + serverDescription() + " lists " + serverTools.size() + " tool(s): "
                    + String.join(", ", new TreeSet<>(serverTools)));
        }
        return serverTools;
    }

    /** How long the server may take to answer each request of the tools/list asked before the drill. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(30);

    /** The HTTP server under a scenario, started fresh in this JVM; null for an upstream URL (it runs already). */
    private McpHttpHost startHttpServer(boolean stateless) throws IOException {
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        if (upstream != null) {
            return null;
        }
        if (cassette != null) {
            return new HttpReplay(List.of(ReplayFile.read(cassette).cassette()), OnExhausted.LAST).start(loopback);
        }
        // Priming events on: the SSE scenarios (#37) resume streams from them.
        return DemoHttpServer.start(loopback, McpHttpHost.DEFAULT_KEEP_ALIVE, stateless).primingEvents(true);
    }

    /** One scenario over HTTP: the server (unless an upstream URL) and the proxy in this JVM, the journal from the proxy. */
    private Verdict runHttp(Scenario scenario, Map<String, String> journals)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        boolean stateless = era == Era.STATELESS;
        try (McpHttpHost server = startHttpServer(stateless);
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(server != null ? server.endpoint() : upstream)
                     .rules(scenario.ruleSet(seed)).seed(seed).journal(10_000).journalContent(stateless).start()) {
            Integer exit = runClient(scenario, List.of(proxy.mcpUrl().toString()), null);
            Instant ended = exit == null ? null : Instant.now();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            Thread.sleep(SETTLE.toMillis());
            JournalSnapshot journal = proxy.journal().snapshot();
            return graded(scenario, journal, JournalJson.write(journal), exit, ended, took, journals);
        }
    }

    /** The grader's verdict on a run; the run's journal (JSON) goes in {@code journals}. */
    private static Verdict graded(Scenario scenario, JournalSnapshot journal, String json, Integer exit,
                                  Instant ended, Duration took, Map<String, String> journals) {
        journals.put(scenario.name(), json);
        Grader.Finding finding = scenario.grader().grade(new Grader.Run(journal, scenario.ruleNames(), exit, ended));
        return new Verdict(scenario.name(), finding.level() != null ? finding.level() : scenario.level(),
                finding.outcome(), finding.reason(), finding.evidence(), exit, took);
    }

    /** Runs the in-process client on a thread of its own: 0 when it returned, 1 when it threw, null when stopped. */
    private Integer runInProcess(Scenario scenario, URI url) throws InterruptedException {
        Integer[] exit = {null};
        Thread thread = new Thread(() -> {
            try {
                inProcess.run(scenario.name(), url);
                exit[0] = 0;
            } catch (Exception | AssertionError e) {
                clientOutput.accept("[" + scenario.name() + "] " + e);
                exit[0] = 1;
            }
        }, "drill-client-" + scenario.name());
        thread.setDaemon(true);
        thread.start();
        thread.join(timeout.toMillis());
        if (thread.isAlive()) {
            thread.interrupt();
            thread.join(1000);
            return null;
        }
        return exit[0];
    }

    /** How long the drill waits for the stdio proxy's journal dump after the client ended. */
    private static final Duration DUMP_WAIT = Duration.ofSeconds(20);

    /** One scenario over stdio: the proxy and the demo server started by the client, the journal from the dump. */
    private Verdict runStdio(Scenario scenario, Map<String, String> journals)
            throws IOException, InterruptedException {
        Path work = null;
        try {
            work = Files.createTempDirectory("mcp-chaos-drill-");
            Path rules = work.resolve("rules.json");
            // A directory: a journal per proxy the client starts (StdioDumps).
            Path dump = Files.createDirectory(work.resolve("journals"));
            boolean stateless = era == Era.STATELESS;
            // A rule file in JSON, which is YAML: each rule as RuleDraft writes it.
            Files.writeString(rules, "{\"rules\": [" + String.join(",", scenario.rules().stream()
                    .map(r -> r.toJson()).toList()) + "]}\n", StandardCharsets.UTF_8);
            List<String> server = new ArrayList<>(cli);
            server.addAll(List.of("stdio", "--no-watch", "--rules", rules.toString(), "--seed", Long.toString(seed),
                    "--journal", "10000", "--journal-dump", dump.toString()));
            if (stateless) {
                server.add("--journal-content"); // the 2026 graders read _meta and requestState
            }
            server.add("--");
            if (serverCommand != null) {
                server.addAll(serverCommand);
            } else if (cassette != null) {
                server.addAll(cli);
                server.addAll(List.of("replay", cassette.toAbsolutePath().toString()));
            } else {
                server.addAll(cli);
                server.add("demo-server");
                if (stateless) {
                    server.add("--dual-era");
                }
            }
            long started = System.nanoTime();
            Integer exit = runClient(scenario, server, dump);
            Instant ended = exit == null ? null : Instant.now();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            String json = StdioDumps.await(dump, DUMP_WAIT);
            if (json == null) {
                // Graded as a run the journal saw nothing of: not exercised, never pass.
                json = "{\"capacity\":10000,\"evicted\":0,\"next\":1,\"entries\":[]}";
                clientOutput.accept("[" + scenario.name() + "] mcp-chaos drill: no journal dump from the stdio proxy "
                        + "within " + DUMP_WAIT.toSeconds() + " s (did the client start the server command?)");
            }
            return graded(scenario, JournalJson.read(json), json, exit, ended, took, journals);
        } finally {
            deleteQuietly(work);
        }
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException ignored) {
            // A temporary directory left behind is no reason to fail the drill.
        }
    }

    /**
     * Runs the client with {@code appended} as its last arguments; its exit code, or null when it
     * outlived the timeout and was stopped. With a {@code dump} directory (stdio), a stopped client
     * is killed alone first, so that the proxies it started see the end of their input and write
     * their journals; what is left of its processes is killed once they are there (or not coming).
     */
    private Integer runClient(Scenario scenario, List<String> appended, Path dump)
            throws IOException, InterruptedException {
        if (inProcess != null) {
            return runInProcess(scenario, URI.create(appended.get(0)));
        }
        List<String> argv = new ArrayList<>(command);
        argv.addAll(appended);
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().put(SCENARIO_VARIABLE, scenario.name());
        Process process = pb.start();
        process.getOutputStream().close();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    clientOutput.accept("[" + scenario.name() + "] " + line);
                }
            } catch (IOException ignored) {
                // The client was stopped: its output ends here.
            }
        }, "drill-client-output");
        pump.setDaemon(true);
        pump.start();
        if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            pump.join(1000);
            return process.exitValue();
        }
        List<ProcessHandle> descendants = process.descendants().toList();
        if (dump != null) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + DUMP_WAIT.toNanos();
            while (!StdioDumps.done(dump) && System.nanoTime() < deadline
                    && descendants.stream().anyMatch(ProcessHandle::isAlive)) {
                Thread.sleep(50);
            }
        }
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
        return null;
    }
}
