package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.diff.Contract;
import dev.mcpchaos.server.diff.ContractDiff;
import dev.mcpchaos.server.diff.ContractSource;
import dev.mcpchaos.server.diff.DiffReport;
import dev.mcpchaos.server.record.CassetteException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code mcp-chaos diff OLD NEW}: the contract diff between two cassettes or live servers (stdio or HTTP). */
@Command(name = "diff",
        mixinStandardHelpOptions = true,
        description = {
            "Compare the MCP contract (tools, resources, resource templates, prompts, and the error class of "
                    + "recorded calls) of two sides and classify each change as breaking or compatible "
                    + "(docs/checks.md, \"Contract diff\"). Each side is a cassette file or a live server (stdio or "
                    + "Streamable HTTP), asked for its lists itself. Only what both sides hold is compared; what one "
                    + "lacks (a list a cassette never asked for, recorded calls a live side was not sent) is listed "
                    + "as not compared.",
            "Exit code 0 when no change is breaking, 1 when one is (or any change with --fail-on compatible), "
                    + "2 on bad input."},
        footer = {"", "Examples:", "  mcp-chaos diff cassettes/v1.ndjson cassettes/v2.ndjson",
            "  mcp-chaos diff cassettes/v1.ndjson --new-server -- npx -y my-mcp-server",
            "  mcp-chaos diff --replay-calls v1.ndjson --new-url http://127.0.0.1:3001/mcp",
            "  mcp-chaos diff --old-server ./v1.sh --new-server ./v2.sh --junit diff.xml"})
final class DiffCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--old-server", arity = "0..1", fallbackValue = "", paramLabel = "CMD",
            description = "The old side is this stdio server (split on spaces); with no value, the command after --.")
    String oldServer;

    @Option(names = "--new-server", arity = "0..1", fallbackValue = "", paramLabel = "CMD",
            description = "The new side is this stdio server (split on spaces); with no value, the command after --.")
    String newServer;

    @Option(names = "--old-url", paramLabel = "URL", description = "The old side is this Streamable HTTP server endpoint.")
    java.net.URI oldUrl;

    @Option(names = "--new-url", paramLabel = "URL", description = "The new side is this Streamable HTTP server endpoint.")
    java.net.URI newUrl;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the changes as JSON to FILE.")
    Path json;

    @Option(names = "--junit", paramLabel = "FILE",
            description = "Also write JUnit XML to FILE: one testcase per change, breaking ones failed, and a "
                    + "skipped one per thing not compared.")
    Path junit;

    @Option(names = "--fail-on", paramLabel = "breaking|compatible", defaultValue = "breaking",
            description = "The least class of change that makes the exit code 1. Default: ${DEFAULT-VALUE}.")
    String failOn;

    @Option(names = "--replay-calls",
            description = {"Send the live side the tools/call requests the cassette side recorded, and compare the "
                    + "class of each answer (result, isError, JSON-RPC error) as two cassettes' are. They run for real, "
                    + "in recorded order, each once: a tool that writes, deletes or sends does it again, so use a test "
                    + "instance. Calls of tools the live side does not list are not sent.",
                "Without it, recorded calls are reported as not compared when the other side is live."})
    boolean replayCalls;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "20",
            description = "How long to wait for each answer of a live server. Default: ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @Parameters(paramLabel = "SIDE", arity = "0..*",
            description = "Cassette files for the sides not given as a server (old first), then after -- a server command.")
    List<String> positional = new ArrayList<>();

    @Override
    public Integer call() {
        boolean failOnCompatible = switch (failOn.trim()) {
            case "breaking" -> false;
            case "compatible" -> true;
            default -> throw new OptionValueException("--fail-on: '" + failOn + "' (expected: breaking or compatible)");
        };
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        int dashes = original.indexOf("--");
        List<String> command = dashes < 0 ? List.of() : original.subList(dashes + 1, original.size());
        List<String> files = new ArrayList<>(positional.subList(0, positional.size() - command.size()));
        if ("".equals(oldServer) && "".equals(newServer)) {
            throw new OptionValueException("--old-server and --new-server: only one can take the command after --"
                    + " (expected: give the other as --new-server 'CMD')");
        }
        if (!command.isEmpty() && !"".equals(oldServer) && !"".equals(newServer)) {
            throw new OptionValueException("a command after -- " + command
                    + " but no side takes it (expected: --old-server or --new-server with no value before --)");
        }
        Contract before;
        Contract after;
        try {
            Side old = side("old", oldServer, oldUrl, command, files);
            Side now = side("new", newServer, newUrl, command, files);
            if (!files.isEmpty()) {
                throw new OptionValueException("unexpected " + files + " (expected: two sides in all, old then new)");
            }
            if (replayCalls && (old.cassette() == null) == (now.cassette() == null)) {
                throw new OptionValueException("--replay-calls: " + (old.cassette() == null ? "both sides are live"
                        : "both sides are cassettes") + " (expected: a cassette, whose recorded calls are sent, and a "
                        + "live side, --old-server/--new-server or --old-url/--new-url)");
            }
            // Cassettes first: a live side is sent the calls the other side recorded.
            Contract oldCassette = old.cassette() != null ? ContractSource.fromCassette(old.cassette()) : null;
            Contract newCassette = now.cassette() != null ? ContractSource.fromCassette(now.cassette()) : null;
            before = oldCassette != null ? oldCassette : live(old, replayCalls ? newCassette : null);
            after = newCassette != null ? newCassette : live(now, replayCalls ? oldCassette : null);
        } catch (NoSuchFileException e) {
            spec.commandLine().getErr().println("mcp-chaos diff: '" + e.getFile() + "' does not exist (expected: a cassette file)");
            return 2;
        } catch (CassetteException | IOException e) {
            spec.commandLine().getErr().println("mcp-chaos diff: " + e.getMessage());
            return 2;
        }
        DiffReport report = ContractDiff.compare(before, after);
        try {
            PrintWriter out = spec.commandLine().getOut();
            out.println("old: " + before.summary());
            out.println("new: " + after.summary());
            report.writeTable(out);
            out.flush();
            if (json != null) {
                try (Writer writer = Files.newBufferedWriter(json, StandardCharsets.UTF_8)) {
                    report.writeJson(writer);
                }
            }
            if (junit != null) {
                try (Writer writer = Files.newBufferedWriter(junit, StandardCharsets.UTF_8)) {
                    report.writeJunit(writer);
                }
            }
        } catch (IOException e) {
            spec.commandLine().getErr().println("mcp-chaos diff: cannot write the report: " + e.getMessage());
            return 2;
        }
        boolean fails = failOnCompatible ? !report.changes().isEmpty() : report.breakingCount() > 0;
        return fails ? 1 : 0;
    }

    /**
     * One side, as given: a cassette file, a stdio command or a URL (exactly one of them).
     *
     * @param which {@code old} or {@code new}
     */
    private record Side(String which, Path cassette, List<String> command, java.net.URI url) {
    }

    /** One side: a server when its option is given, else the next cassette file. */
    private Side side(String which, String server, java.net.URI url, List<String> tail, List<String> files) {
        if (url != null) {
            if (server != null) {
                throw new OptionValueException("--" + which + "-url and --" + which + "-server (expected: one of them)");
            }
            return new Side(which, null, null, url);
        }
        if (server != null) {
            List<String> command = server.isEmpty() ? tail
                    : Arrays.stream(server.trim().split("\\s+")).filter(s -> !s.isEmpty()).toList();
            if (command.isEmpty()) {
                throw new OptionValueException("--" + which + "-server: no command (expected: --" + which
                        + "-server 'CMD' or --" + which + "-server -- CMD ARGS...)");
            }
            return new Side(which, null, command, null);
        }
        if (files.isEmpty()) {
            throw new OptionValueException("no " + which + " side (expected: a cassette file or --" + which
                    + "-server)");
        }
        return new Side(which, Path.of(files.remove(0)), null, null);
    }

    /** Asks a live side for its contract, and sends it the calls {@code recorded} holds when given. */
    private Contract live(Side side, Contract recorded) throws IOException {
        Duration timeout = Duration.ofSeconds(timeoutSeconds);
        java.util.Collection<Contract.Call> replay = recorded != null ? recorded.calls().values() : null;
        return side.url() != null ? ContractSource.fromUrl(side.url(), timeout, replay)
                : ContractSource.fromStdio(side.command(), timeout, replay);
    }
}
