package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.ChaosBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The options every proxy command shares: what to log and what to break. A picocli mixin. */
final class ChaosOptions {

    @Option(names = "--log-traffic", paramLabel = "CHARS", arity = "0..1", fallbackValue = "200",
            description = "Log every message on stderr, with up to CHARS characters of it (default when given: 200).")
    Integer logTraffic;

    @Option(names = "--rules", paramLabel = "FILE",
            description = "Chaos rules to apply (YAML, or JSON for .json; see docs/rules.md). A file that is not valid "
                    + "is refused, with the reason, before any traffic flows (exit code 2).")
    Path rules;

    @Option(names = "--seed", paramLabel = "N",
            description = "Seed of every random choice the rules make; overrides the file's. Default: generated. "
                    + "The seed used is logged at start, so a run can be repeated.")
    Long seed;

    @Option(names = "--control", paramLabel = "HOST:PORT",
            description = "Serve GET /health and GET /metrics (Prometheus text; see docs/metrics.md) here, such as "
                    + "127.0.0.1:9090. Nothing is authenticated: keep it on loopback. Default: off.")
    String control;

    @Option(names = "--events", paramLabel = "FILE",
            description = "Write the event log here: one JSON line per injected fault, session start and end, parse "
                    + "error, limit breach and upstream failure (never a message's content). '-' is stderr. Default: off.")
    Path events;

    /**
     * Gives the builder what these options say, except the rules, which the command loads where
     * it can answer a bad file with exit code 2.
     *
     * @throws CommandLine.ParameterException naming the option, for a value that cannot be used
     */
    void applyTo(ChaosBuilder<?> builder, CommandLine commandLine) {
        if (logTraffic != null) {
            builder.logTraffic(logTraffic);
        }
        if (seed != null) {
            builder.seed(seed);
        }
        try {
            OutputStream out = openEvents();
            if (out != null) {
                builder.events(out, !events.toString().equals("-"));
            }
        } catch (IOException e) {
            throw new CommandLine.ParameterException(commandLine, "--events: " + events + " cannot be opened: "
                    + e.getMessage());
        }
        if (control != null) {
            try {
                builder.control(HttpCommand.parseAddress("--control", control));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(commandLine, e.getMessage());
            }
        }
    }

    /** Opens the event log's destination; null when there is none. */
    private OutputStream openEvents() throws IOException {
        if (events == null) {
            return null;
        }
        if (events.toString().equals("-")) {
            return new FileOutputStream(FileDescriptor.err);
        }
        return new BufferedOutputStream(Files.newOutputStream(events,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND));
    }
}
