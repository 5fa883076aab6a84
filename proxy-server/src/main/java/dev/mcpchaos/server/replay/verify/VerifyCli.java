package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.record.RedactPath;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code mcp-chaos replay FILE --verify -- COMMAND...} run: reads the cassette, checks the
 * live server, prints one line per request on stdout, and gives the exit code (0 all same,
 * 1 differences, 2 bad input or no server).
 */
public final class VerifyCli {

    /**
     * Paths that differ between two honest runs of the same server, so they are never compared:
     * the server's version moves with every release, and {@code _meta} carries per-run data.
     */
    public static final List<String> DEFAULT_IGNORED = List.of("/result/serverInfo/version");

    private final List<Path> arguments;
    private final List<String> ignore;
    private final Path report;
    private final java.net.URI url;
    private boolean update;

    /**
     * @param arguments the cassette, then the live server's command line
     * @param ignore    more paths not compared
     * @param report    where to write the JSON report, or null
     */
    public VerifyCli(List<Path> arguments, List<String> ignore, Path report) {
        this(arguments, ignore, report, null);
    }

    /**
     * @param arguments the cassette, then (without {@code url}) the live server's command line
     * @param ignore    more paths not compared
     * @param report    where to write the JSON report, or null
     * @param url       the live Streamable HTTP server's MCP endpoint, or null for a stdio command
     */
    public VerifyCli(List<Path> arguments, List<String> ignore, Path report, java.net.URI url) {
        this.arguments = List.copyOf(arguments);
        this.ignore = List.copyOf(ignore);
        this.report = report;
        this.url = url;
    }

    /**
     * Re-records the cassette's differing answers from the live server after the check (redacted,
     * written atomically); the exit code is then 0 unless a request went unanswered.
     */
    public VerifyCli update(boolean update) {
        this.update = update;
        return this;
    }

    /** Runs it; the exit code. */
    public int run() {
        if (url != null && arguments.size() != 1) {
            System.err.println("mcp-chaos: --verify-url: " + (arguments.isEmpty() ? "no cassette" : "one cassette, "
                    + "and no server command, go with it") + " (expected: replay FILE --verify-url URL)");
            return 2;
        }
        if (url == null && arguments.size() < 2) {
            System.err.println("mcp-chaos: --verify: no server command (expected: replay FILE --verify -- COMMAND...)");
            return 2;
        }
        Cassette cassette;
        try {
            cassette = Cassette.read(arguments.get(0));
        } catch (CassetteException e) {
            System.err.println("mcp-chaos: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            System.err.println("mcp-chaos: " + arguments.get(0) + ": cannot be read: " + e.getMessage()
                    + " (expected: a cassette file)");
            return 2;
        }
        List<RedactPath> paths = new ArrayList<>();
        try {
            for (String p : DEFAULT_IGNORED) {
                paths.add(RedactPath.parse(p));
            }
            for (String p : ignore) {
                paths.add(RedactPath.parse(p));
            }
        } catch (IllegalArgumentException e) {
            System.err.println("mcp-chaos: --ignore: " + e.getMessage());
            return 2;
        }
        List<String> command = arguments.subList(1, arguments.size()).stream().map(Path::toString).toList();
        VerifyResult result;
        try {
            result = url != null
                    ? new HttpVerifier(cassette, url, new JsonDiff(paths), Duration.ofSeconds(10)).run()
                    : new StdioVerifier(cassette, command, new JsonDiff(paths), Duration.ofSeconds(10)).run();
        } catch (IOException e) {
            System.err.println(url != null
                    ? "mcp-chaos: --verify-url: " + url + " cannot be reached: " + e
                            + " (expected: a running Streamable HTTP MCP server's endpoint)"
                    : "mcp-chaos: --verify: cannot start " + String.join(" ", command) + ": " + e.getMessage());
            return 2;
        }
        // The report is this command's output: to the real stdout, whatever System.out was pointed at.
        java.io.PrintStream stdout = new java.io.PrintStream(
                new java.io.FileOutputStream(java.io.FileDescriptor.out), true, java.nio.charset.StandardCharsets.UTF_8);
        stdout.print(result.report());
        stdout.flush();
        if (report != null) {
            try {
                writeReport(result, report);
            } catch (IOException e) {
                System.err.println("mcp-chaos: --verify-report: " + report + ": " + e.getMessage());
                return 2;
            }
        }
        if (!result.items().isEmpty() && result.items().stream().noneMatch(VerifyResult.Item::answered)) {
            System.err.println("mcp-chaos: --verify: the server answered nothing");
            return 2;
        }
        if (update) {
            return update(cassette, result);
        }
        return result.allSame() ? 0 : 1;
    }

    private int update(Cassette cassette, VerifyResult result) {
        java.util.Map<Long, com.fasterxml.jackson.databind.JsonNode> live = new java.util.HashMap<>();
        long unanswered = 0;
        for (VerifyResult.Item item : result.items()) {
            if (!item.answered()) {
                unanswered++;
            } else if ("differs".equals(item.verdict()) && item.answerSeq() >= 0) {
                live.put(item.answerSeq(), item.live());
            }
        }
        Path file = arguments.get(0);
        if (!live.isEmpty()) {
            try {
                dev.mcpchaos.server.record.CassetteUpdate.write(cassette, live, file);
            } catch (IllegalArgumentException | IOException e) {
                System.err.println("mcp-chaos: --update: " + file + ": " + e.getMessage());
                return 2;
            }
        }
        System.err.println("mcp-chaos: --update: " + live.size() + " answer(s) re-recorded into " + file
                + (unanswered > 0 ? "; " + unanswered + " unanswered request(s) kept as recorded" : ""));
        return unanswered > 0 ? 1 : 0;
    }

    private static void writeReport(VerifyResult result, Path file) throws IOException {
        JsonMapper json = JsonMapper.builder().build();
        ObjectNode root = json.createObjectNode();
        root.put("allSame", result.allSame());
        ArrayNode items = root.putArray("requests");
        for (VerifyResult.Item i : result.items()) {
            ObjectNode item = items.addObject().put("seq", i.seq()).put("id", i.id()).put("request", i.label())
                    .put("verdict", i.verdict());
            ArrayNode diffs = item.putArray("differences");
            if (i.differences() != null) {
                for (JsonDiff.Difference d : i.differences()) {
                    diffs.addObject().put("kind", d.kind().name().toLowerCase()).put("path", d.pointer());
                }
            }
        }
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), ".verify", ".tmp");
        Files.write(tmp, json.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
