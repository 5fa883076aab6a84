package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * <p>This version drives the Streamable HTTP transport in the 2025 era (sessions); a scenario
 * that needs more is reported {@link Outcome#NOT_BUILT not built}, one for another transport or
 * era {@link Outcome#NOT_APPLICABLE not applicable}, never run with a stub verdict.
 */
public final class Drill {

    /** The transport this version drives. */
    public static final TransportKind TRANSPORT = TransportKind.HTTP;

    /** The era this version drives. */
    public static final Era ERA = Era.SESSIONS;

    /** The environment variable that names the scenario to the client, as in the conformance suite. */
    public static final String SCENARIO_VARIABLE = "MCP_CONFORMANCE_SCENARIO";

    /** How long after the client exits the journal is read: what the proxy still relays is recorded. */
    private static final Duration SETTLE = Duration.ofMillis(200);

    private final List<String> command;
    private List<String> scenarios;
    private Duration timeout = Duration.ofSeconds(30);
    private long seed;
    private Consumer<String> clientOutput = line -> { };

    private Drill(List<String> command) {
        this.command = List.copyOf(command);
        if (this.command.isEmpty()) {
            throw new IllegalArgumentException("command: empty (expected: the client command)");
        }
    }

    /** A drill of the client started by {@code command} (the server's URL is appended). */
    public static Drill builder(List<String> command) {
        return new Drill(Objects.requireNonNull(command, "command"));
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

    /** The scenarios that would run, in order. */
    public List<Scenario> selected() {
        if (scenarios == null) {
            return Catalogue.all().stream().filter(s -> s.built() && s.appliesTo(TRANSPORT, ERA)).toList();
        }
        return scenarios.stream().map(n -> Catalogue.find(n).orElseThrow()).toList();
    }

    /** Runs the client once per scenario and grades each run. */
    public Scorecard run() {
        List<Verdict> verdicts = new ArrayList<>();
        Map<String, String> journals = new LinkedHashMap<>();
        for (Scenario scenario : selected()) {
            verdicts.add(run(scenario, journals));
        }
        return new Scorecard(seed, verdicts, journals);
    }

    /** Runs one scenario and grades it; puts its journal (JSON) in {@code journals} when it ran. */
    private Verdict run(Scenario scenario, Map<String, String> journals) {
        if (!scenario.built()) {
            return new Verdict(scenario.name(), scenario.level(), Outcome.NOT_BUILT,
                    "not built yet: " + scenario.notBuilt(), List.of(), null, Duration.ZERO);
        }
        if (!scenario.appliesTo(TRANSPORT, ERA)) {
            return new Verdict(scenario.name(), scenario.level(), Outcome.NOT_APPLICABLE, "it applies to "
                    + Catalogue.transports(scenario) + " in the " + Catalogue.eras(scenario) + " era; this run is "
                    + "http in the " + ERA.label() + " era", List.of(), null, Duration.ZERO);
        }
        long started = System.nanoTime();
        try (McpHttpHost server = DemoHttpServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(server.endpoint())
                     .rules(scenario.ruleSet(seed)).seed(seed).journal(10_000).start()) {
            Integer exit = runClient(scenario, proxy.mcpUrl().toString());
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            Thread.sleep(SETTLE.toMillis());
            JournalSnapshot journal = proxy.journal().snapshot();
            journals.put(scenario.name(), JournalJson.write(journal));
            Grader.Finding finding = scenario.grader().grade(new Grader.Run(journal, scenario.ruleNames(), exit));
            return new Verdict(scenario.name(), scenario.level(), finding.outcome(), finding.reason(),
                    finding.evidence(), exit, took);
        } catch (IOException e) {
            throw new UncheckedIOException("scenario " + scenario.name() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during scenario " + scenario.name(), e);
        }
    }

    /** Runs the client; its exit code, or null when it outlived the timeout and was stopped. */
    private Integer runClient(Scenario scenario, String url) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(command);
        argv.add(url);
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
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
        return null;
    }
}
