package dev.mcpchaos.server.cli;

import picocli.CommandLine.Option;

import java.nio.file.Path;

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
}
