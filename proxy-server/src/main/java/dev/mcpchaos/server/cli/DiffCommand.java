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
            "Compare the MCP contract (tools, resources, resource templates, prompts, and for cassettes the "
                    + "error class of recorded calls) of two sides and classify each change as breaking or "
                    + "compatible (docs/checks.md, \"Contract diff\"). Each side is a cassette file or a live "
                    + "server (stdio or Streamable HTTP), asked for its lists itself.",
            "Exit code 0 when no change is breaking, 1 when one is (or any change with --fail-on compatible), "
                    + "2 on bad input."},
        footer = {"", "Examples:", "  mcp-chaos diff cassettes/v1.ndjson cassettes/v2.ndjson",
            "  mcp-chaos diff cassettes/v1.ndjson --new-server -- npx -y my-mcp-server",
            "  mcp-chaos diff --old-server 'node old/server.js' --new-server 'node new/server.js' --junit diff.xml"})
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
            description = "Also write JUnit XML to FILE: one testcase per change, breaking ones failed.")
    Path junit;

    @Option(names = "--fail-on", paramLabel = "breaking|compatible", defaultValue = "breaking",
            description = "The least class of change that makes the exit code 1. Default: ${DEFAULT-VALUE}.")
    String failOn;

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
            before = side("old", oldServer, oldUrl, command, files);
            after = side("new", newServer, newUrl, command, files);
            if (!files.isEmpty()) {
                throw new OptionValueException("unexpected " + files + " (expected: two sides in all, old then new)");
            }
        } catch (NoSuchFileException e) {
            spec.commandLine().getErr().println("mcp-chaos diff: '" + e.getFile() + "' does not exist (expected: a cassette file)");
            return 2;
        } catch (CassetteException | IOException e) {
            spec.commandLine().getErr().println("mcp-chaos diff: " + e.getMessage());
            return 2;
        }
        DiffReport report = new DiffReport(before.source(), after.source(), ContractDiff.diff(before, after));
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

    /** One side: a server when its option is given, else the next cassette file. */
    private Contract side(String which, String server, java.net.URI url, List<String> tail, List<String> files)
            throws IOException {
        if (url != null) {
            if (server != null) {
                throw new OptionValueException("--" + which + "-url and --" + which + "-server (expected: one of them)");
            }
            return ContractSource.fromUrl(url, Duration.ofSeconds(timeoutSeconds));
        }
        if (server != null) {
            List<String> command = server.isEmpty() ? tail
                    : Arrays.stream(server.trim().split("\\s+")).filter(s -> !s.isEmpty()).toList();
            if (command.isEmpty()) {
                throw new OptionValueException("--" + which + "-server: no command (expected: --" + which
                        + "-server 'CMD' or --" + which + "-server -- CMD ARGS...)");
            }
            return ContractSource.fromStdio(command, Duration.ofSeconds(timeoutSeconds));
        }
        if (files.isEmpty()) {
            throw new OptionValueException("no " + which + " side (expected: a cassette file or --" + which
                    + "-server)");
        }
        return ContractSource.fromCassette(Path.of(files.remove(0)));
    }
}
