package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.server.control.HtmlReport;
import dev.mcpchaos.server.drill.Catalogue;
import dev.mcpchaos.server.drill.Drill;
import dev.mcpchaos.server.drill.Era;
import dev.mcpchaos.server.drill.Scenario;
import dev.mcpchaos.server.drill.Scorecard;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code mcp-chaos drill}: grades an MCP client under faults, scenario by scenario, from the
 * journal ({@link Drill}, docs/drill.md). Only maps options: everything behind it is the library's.
 * Exit codes: 0 no MUST scenario failed, 1 a MUST scenario failed, 2 usage.
 */
@Command(name = "drill",
        mixinStandardHelpOptions = true,
        description = {"How resilient is my MCP client? Runs CLIENT_COMMAND once per scenario against the built-in "
                + "demo server (or --upstream URL, --server CMD, --cassette FILE) behind a proxy with the scenario's "
                + "faults, as the MCP conformance suite's client mode "
                + "does (the server's URL appended as the last argument, MCP_CONFORMANCE_SCENARIO=<name> in its "
                + "environment), and grades each run from the journal: pass, fail, not applicable, not exercised "
                + "(the fault never fired), with the evidence.",
            "The scorecard goes to stderr as a table. This version drives Streamable HTTP and stdio in the 2025 era "
                    + "and in the 2026-07-28 era (--era 2026); --list shows what is not built yet."},
        footer = {"", "Examples:",
            "  mcp-chaos drill --list",
            "  mcp-chaos drill --transport stdio -- node my-client.mjs --stdio",
            "  mcp-chaos drill -- node my-client.mjs",
            "  mcp-chaos drill --era 2026 -- node my-client.mjs --era 2026",
            "  mcp-chaos drill --era 2026 --transport stdio -- node my-client.mjs --era 2026 --stdio",
            "  mcp-chaos drill --scenario answer-lost --scenario retry-after-503 --junit drill.xml -- ./client",
            "  mcp-chaos drill --html drill.html --report-json drill.json -- node my-client.mjs",
            "  mcp-chaos drill --upstream http://127.0.0.1:3001/mcp -- node my-client.mjs",
            "  mcp-chaos drill --transport stdio --server npx -y @modelcontextprotocol/server-everything stdio "
                    + "-- node my-client.mjs --stdio",
            "  mcp-chaos drill --cassette everything.ndjson -- node my-client.mjs",
            "", "Exit codes: 0 no MUST scenario failed, 1 a MUST scenario failed, 2 usage."})
final class DrillCommand implements Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--list", description = "Print the catalogue (every scenario, built or not) and exit.")
    boolean list;

    @Option(names = "--scenario", paramLabel = "NAME",
            description = "Run this scenario (repeatable). Default: every scenario this version can run.")
    List<String> scenarios = new ArrayList<>();

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s",
            description = "How long the client may run per scenario before it is stopped. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "0",
            description = "The seed of the scenarios' rules. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--report-json", paramLabel = "FILE", description = "Also write the scorecard as JSON here.")
    Path reportJson;

    @Option(names = "--junit", paramLabel = "FILE", description = "Also write the scorecard as JUnit XML here.")
    Path junit;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write one self-contained HTML report here: "
            + "the scorecard and each scenario's messages and faults on one timeline (docs/ui.md).")
    Path html;

    @Option(names = "--transport", paramLabel = "http|stdio", defaultValue = "http",
            description = "The transport: http (the server's URL appended to CLIENT_COMMAND) or stdio (a server "
                    + "command appended: this mcp-chaos's stdio proxy, with the scenario's rules, in front of its demo "
                    + "server; the client starts it). Default: ${DEFAULT-VALUE}.")
    String transport;

    @Option(names = "--show-client-output", description = "Pass the client's output on to stderr, each line "
            + "prefixed with [scenario].")
    boolean showClientOutput;

    @Option(names = "--era", paramLabel = "2025|2026", defaultValue = "2025",
            description = "Which era's scenarios run: 2025 (sessions, the revisions up to 2025-11-25) or 2026 (the "
                    + "stateless 2026-07-28 revision, over http or stdio: the demo server then serves that revision "
                    + "too, beside the 2025 ones, and the 2026 scenarios run besides those of both eras). One era per "
                    + "run, as a client speaks one; drill both with two runs. Default: ${DEFAULT-VALUE}.")
    String era;

    @Option(names = "--upstream", paramLabel = "URL", description = "Drill against the Streamable HTTP MCP server "
            + "at URL (http only) instead of the demo server: one server for every scenario. Scenarios whose fault "
            + "needs a tool it does not list are not applicable.")
    String upstream;

    @Option(names = "--server", paramLabel = "CMD", arity = "1..*", description = "Drill against the stdio MCP "
            + "server this command starts (--transport stdio only), fresh per scenario: the words up to the -- "
            + "before CLIENT_COMMAND, such as --server npx -y @modelcontextprotocol/server-everything stdio -- node "
            + "client.mjs --stdio.")
    List<String> server;

    @Option(names = "--cassette", paramLabel = "FILE", description = "Drill against the server recorded in this "
            + "cassette (or transcript), replayed fresh per scenario, over either transport; a request it has no "
            + "recording for is answered with an error.")
    Path cassette;

    @Parameters(paramLabel = "CLIENT_COMMAND", arity = "0..*",
            description = "The client command, after --; the server's URL (or, with --transport stdio, a server command) is appended.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (list) {
            out.print(listing());
            out.flush();
            return 0;
        }
        if (command.isEmpty()) {
            throw new OptionValueException("CLIENT_COMMAND: missing (expected: mcp-chaos drill [options] -- "
                    + "CLIENT_COMMAND..., or --list)");
        }
        Duration perScenario;
        try {
            perScenario = Units.parseDuration(timeout);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--timeout: " + e.getMessage());
        }
        Drill drill;
        try {
            drill = Drill.builder(command).scenarios(scenarios).timeout(perScenario).seed(seed);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--" + e.getMessage());
        }
        if (transport.equals("stdio")) {
            drill.stdio(selfCommand());
        } else if (!transport.equals("http")) {
            throw new OptionValueException("--transport: '" + transport + "' (expected: http or stdio)");
        }
        Era selected = Arrays.stream(Era.values()).filter(e -> e.label().equals(era)).findFirst()
                .orElseThrow(() -> new OptionValueException("--era: '" + era + "' (expected: 2025 or 2026)"));
        drill.era(selected);
        chooseServer(drill);
        if (showClientOutput) {
            drill.clientOutput(line -> {
                synchronized (err) {
                    err.println(line);
                    err.flush();
                }
            });
        }
        Scorecard card = drill.run();
        err.print(card.table());
        err.flush();
        if (reportJson != null) {
            Files.writeString(reportJson, card.toJson(), StandardCharsets.UTF_8);
        }
        if (junit != null) {
            Files.writeString(junit, card.toJunitXml(), StandardCharsets.UTF_8);
        }
        if (html != null) {
            HtmlReport.builder("drill of " + String.join(" ", command)).drill(card.toJson()).write(html);
        }
        return card.exitCode();
    }

    /** --upstream, --server or --cassette (at most one; none: the demo server), checked against the transport. */
    private void chooseServer(Drill drill) {
        int given = (upstream != null ? 1 : 0) + (server != null ? 1 : 0) + (cassette != null ? 1 : 0);
        if (given > 1) {
            throw new OptionValueException("--upstream, --server, --cassette: one of them (expected: the server to "
                    + "drill against, or none for the demo server)");
        }
        try {
            if (upstream != null) {
                if (drill.transport() != dev.mcpchaos.core.transport.TransportKind.HTTP) {
                    throw new OptionValueException("--upstream: an HTTP server is drilled over http (expected: no "
                            + "--transport stdio; a stdio server is given with --server CMD)");
                }
                drill.upstream(java.net.URI.create(upstream));
            } else if (server != null) {
                if (drill.transport() != dev.mcpchaos.core.transport.TransportKind.STDIO) {
                    throw new OptionValueException("--server: a stdio server is drilled over stdio (expected: "
                            + "--transport stdio; an HTTP server is given with --upstream URL)");
                }
                drill.server(server);
            } else if (cassette != null) {
                drill.cassette(cassette);
            }
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--" + e.getMessage());
        }
    }

    /**
     * The command that runs this mcp-chaos: this JVM's java on this JVM's class path (the jar, or
     * the classes of a build), tuned to start fast, since a stdio drill starts two per scenario.
     */
    static List<String> selfCommand() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                Main.class.getName());
    }

    /** Where a built scenario runs: {@code http, stdio in the 2025 and 2026 eras}. */
    private static String runnable(Scenario s) {
        List<String> eras = s.eras().stream().map(Era::label).sorted().toList();
        return Catalogue.transports(s) + " in the " + String.join(" and ", eras) + (eras.size() > 1 ? " eras" : " era");
    }

    /** The catalogue, one block per scenario: what {@code --list} prints. */
    static String listing() {
        StringBuilder sb = new StringBuilder();
        for (Scenario s : Catalogue.all()) {
            String missing = Catalogue.notBuiltYet(s);
            sb.append(s.name()).append("  [").append(s.level()).append(", ")
                    .append(s.built() ? "runnable over " + runnable(s) : "not built yet").append("]\n");
            sb.append("  fault:      ").append(s.fault()).append('\n');
            sb.append("  resilient:  ").append(s.resilient()).append('\n');
            sb.append("  source:     ").append(s.source()).append('\n');
            sb.append("  applies to: ").append(String.join(", ", s.transports().stream()
                            .map(t -> t.name().toLowerCase(java.util.Locale.ROOT)).sorted().toList()))
                    .append("; eras ").append(String.join(", ", s.eras().stream().map(e -> e.label()).sorted()
                            .toList())).append('\n');
            sb.append("  graded by:  ").append(s.grading()).append('\n');
            if (!missing.isEmpty()) {
                sb.append("  not built yet: ").append(missing).append('\n');
            }
        }
        long built = Catalogue.all().stream().filter(Scenario::built).count();
        sb.append('\n').append(Catalogue.all().size()).append(" scenarios, ").append(built)
                .append(" runnable (each over its transports in its eras), ")
                .append(Catalogue.all().size() - built)
                .append(" not built yet. See docs/drill.md.\n");
        return sb.toString();
    }
}
