package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.replay.StdioReplay;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code mcp-chaos replay FILE...}: plays the recorded server over stdin and stdout. */
@Command(name = "replay",
        mixinStandardHelpOptions = true,
        description = {"Play the server recorded in cassettes (see docs/record-replay.md) on stdin and stdout: a "
                + "drop-in for a server command in an MCP client's config. Each request gets what was recorded for "
                + "the same method and params (_meta, the id and progress tokens aside); repeats in recorded order, "
                + "then the last again; a request with no recording gets error -32601 naming the closest recorded one."},
        footer = {"", "Example:", "  mcp-chaos replay cassettes/everything.ndjson"})
final class ReplayCommand implements Callable<Integer> {

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Cassettes to play, in this order.")
    List<Path> files;

    @Option(names = "--fail-on-unmatched",
            description = "Exit with code 1 at the end when any request had no recording (for CI).")
    boolean failOnUnmatched;

    @Override
    public Integer call() throws IOException {
        OutputStream protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        System.setOut(System.err); // stdout belongs to the protocol
        List<Cassette> cassettes = new ArrayList<>();
        for (Path file : files) {
            try {
                cassettes.add(Cassette.read(file));
            } catch (CassetteException e) {
                System.err.println("mcp-chaos: " + e.getMessage());
                return StdioCommand.RULES_REFUSED;
            } catch (IOException e) {
                System.err.println("mcp-chaos: " + file + ": cannot be read: " + e.getMessage()
                        + " (expected: a cassette file)");
                return StdioCommand.RULES_REFUSED;
            }
        }
        StdioReplay replay = new StdioReplay(cassettes);
        replay.serve(System.in, protocol);
        return failOnUnmatched && replay.unmatched() > 0 ? 1 : 0;
    }
}
