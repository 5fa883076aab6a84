package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.control.ControlServer;
import dev.mcpchaos.server.live.LiveConsole;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.function.Function;

/** The options every proxy command shares: what to log and what to break. A picocli mixin. */
final class ChaosOptions {

    @Option(names = "--log-traffic", paramLabel = "CHARS", arity = "0..1", fallbackValue = "200",
            description = "Log every message on stderr, with up to CHARS characters of it, secrets redacted"
                    + " (default when given: 200).")
    Integer logTraffic;

    @Option(names = "--rules", paramLabel = "FILE",
            description = "Chaos rules to apply (YAML, or JSON for .json; see docs/rules.md). A file that is not valid "
                    + "is refused, with the reason, before any traffic flows (exit code 2).")
    Path rules;

    @Option(names = "--seed", paramLabel = "N",
            description = "Seed of every random choice the rules make; overrides the file's. Default: generated. "
                    + "The seed used is logged at start, so a run can be repeated.")
    Long seed;

    @Option(names = "--seed-from-env", paramLabel = "VAR",
            description = "Derive the seed from the value of the environment variable VAR, such as POD_NAME: the same "
                    + "value gives the same seed in every run (the first 8 bytes of its SHA-256, top bit cleared; see "
                    + "docs/cli.md). --seed wins. A VAR that is not set or is empty is refused at start.")
    String seedFromEnv;

    @Option(names = "--metrics-listen", paramLabel = "HOST:PORT|off",
            description = "Serve the operations listener here: /metrics (Prometheus), /health (live) and /ready "
                    + "(taking traffic), read-only and without a token (see docs/operations.md), such as "
                    + "0.0.0.0:9464, or 'off'. Default: off.")
    String metricsListen;

    /** The environment variable the control token may come from (safer than the command line, which ps shows). */
    static final String TOKEN_VARIABLE = "MCP_CHAOS_CONTROL_TOKEN";

    @Option(names = "--control", paramLabel = "HOST:PORT|off",
            description = "Serve the control API here (status, rules, panic switch, events, Prometheus metrics; see "
                    + "docs/control-api.md), such as 127.0.0.1:9090, or 'off'. Beyond loopback a token is required. "
                    + "Default: 127.0.0.1:9090 for http, off for stdio.")
    String control;

    @Option(names = "--control-token", paramLabel = "TOKEN",
            description = "The bearer token every control request (but GET /health) must carry. Default: the "
                    + TOKEN_VARIABLE + " environment variable; none on loopback.")
    String controlToken;

    @Option(names = "--control-head-timeout", paramLabel = "DURATION", defaultValue = "10s",
            description = "Time a control request's head may take from its first byte; then 408 and the connection "
                    + "is closed. Default: ${DEFAULT-VALUE}.")
    String controlHeadTimeout;

    @Option(names = "--control-body-timeout", paramLabel = "DURATION", defaultValue = "30s",
            description = "Time a control request's body may take from the end of its head (then 408), and a client "
                    + "may leave its answers unread (then the connection is closed). Default: ${DEFAULT-VALUE}.")
    String controlBodyTimeout;

    @Option(names = "--no-watch",
            description = "Do not reload the --rules file when it changes (by default a valid edit applies at once, "
                    + "and an invalid one is logged and ignored).")
    boolean noWatch;

    @Option(names = "--quiet",
            description = "No live view. By default, when stderr is a terminal, a compact summary (messages per "
                    + "direction, faults per rule, the last faults) is kept up to date at the bottom of stderr, "
                    + "with the logs printed above it. Logs still go to stderr at their level either way.")
    boolean quiet;

    /** The control address when --control is not given: none for stdio, 127.0.0.1:9090 for http. */
    private String defaultControl;

    // Off on the command line: the journal costs about 10 us of CPU per HTTP request
    // (docs/benchmarks.md), which a sidecar pays on every request and only a test reads.
    // The builders and McpChaosContainer turn it on, and so does --check, whose client.* checks
    // read it. No defaultValue: null tells "not given" (nor by its variable) from an explicit off.
    @Option(names = "--journal", paramLabel = "N|off",
            description = "Keep a journal of the last N messages (direction, kind, id, method, tool, what each rule did; "
                    + "no content), served at GET /journal on the control API (see docs/journal.md), such as 10000, "
                    + "or 'off'. Default: off; with --check " + JournalRing.DEFAULT_CAPACITY + ", for its client.* "
                    + "checks (the builders and McpChaosContainer keep " + JournalRing.DEFAULT_CAPACITY + ").")
    String journal;

    @Option(names = "--events", paramLabel = "FILE",
            description = "Write the event log here: one JSON line per injected fault, session start and end, parse "
                    + "error, limit breach and upstream failure (never a message's content). '-' is stderr. Default: off.")
    Path events;

    /** --record and the redaction options. */
    @CommandLine.Mixin
    RecordOptions recording = new RecordOptions();

    /** --check and the report options. */
    @CommandLine.Mixin
    CheckOptions checks = new CheckOptions();

    /**
     * Gives the builder what these options say, except the rules, which the command loads where
     * it can answer a bad file with exit code 2.
     *
     * @param live the live view, or null: it gets the meters and the faults, and {@code --events -}
     *             is printed above it
     * @throws OptionValueException naming the option, for a value that cannot be used
     */
    void applyTo(ChaosBuilder<?> builder, LiveConsole live) {
        builder.watchRules(!noWatch);
        builder.journal(journalCapacity(System.err));
        recording.applyTo(builder);
        checks.applyTo(builder);
        if (live != null) {
            live.applyTo(builder);
        }
        if (logTraffic != null) {
            builder.logTraffic(logTraffic);
        }
        if (seed != null) {
            builder.seed(seed);
        } else if (seedFromEnv != null) {
            long derived = seedFromEnvironment(seedFromEnv, System.getenv(seedFromEnv));
            builder.seed(derived, "env:" + seedFromEnv);
            org.slf4j.LoggerFactory.getLogger(ChaosOptions.class).info("seed {} (from the environment variable {}='{}')",
                    derived, seedFromEnv, System.getenv(seedFromEnv));
        }
        String operations = metricsAddress();
        if (operations != null) {
            try {
                builder.operations(HttpCommand.parseAddress("--metrics-listen", operations));
            } catch (IllegalArgumentException e) {
                throw new OptionValueException(e.getMessage());
            }
        }
        try {
            OutputStream out = openEvents(live);
            if (out != null) {
                builder.events(out, !events.toString().equals("-"));
            }
        } catch (IOException e) {
            throw new OptionValueException("--events: '" + events + "' cannot be opened: " + whyNotWritable(events, e)
                    + " (expected: a file to append to, or - for stderr)");
        }
        // Checked even with the control API off: a bad value is a mistake either way.
        builder.controlHeadTimeout(controlTimeout("--control-head-timeout", controlHeadTimeout));
        builder.controlBodyTimeout(controlTimeout("--control-body-timeout", controlBodyTimeout));
        String address = controlAddress();
        if (address != null) {
            String token = controlToken != null ? controlToken : System.getenv(TOKEN_VARIABLE);
            try {
                InetSocketAddress at = HttpCommand.parseAddress("--control", address);
                ControlServer.requireTokenBeyondLoopback(at, token);
                builder.control(at);
                if (token != null) {
                    builder.controlToken(token);
                }
            } catch (IllegalArgumentException e) {
                throw new OptionValueException(e.getMessage());
            }
        }
    }

    /**
     * The journal's capacity: what --journal (or its variable) says; when neither does, room for
     * {@link JournalRing#DEFAULT_CAPACITY} entries if the checks are on (their client.* checks
     * judge the client by what the journal says the faults did, and without it would report
     * nothing), said in one line on {@code err}, else off.
     */
    int journalCapacity(PrintStream err) {
        if (journal != null) {
            return journalCapacity(journal);
        }
        if (!checks.enabled()) {
            return 0;
        }
        err.println("mcp-chaos: --check turns the journal on (" + JournalRing.DEFAULT_CAPACITY + " entries) for the "
                + "client.* checks; --journal off to do without");
        return JournalRing.DEFAULT_CAPACITY;
    }

    /** The --journal value: a count of entries from 1, or off (0). */
    static int journalCapacity(String text) {
        if (text.equalsIgnoreCase("off")) {
            return 0;
        }
        try {
            int capacity = Integer.parseInt(text.trim());
            if (capacity >= 1) {
                return capacity;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new OptionValueException("--journal: '" + text + "' (expected: a number of entries >= 1, such as 10000,"
                + " or off)");
    }

    /**
     * The seed for {@code --seed-from-env variable}, whose value is {@code value} (null: not set).
     *
     * @throws OptionValueException when the variable is not set or is empty
     */
    static long seedFromEnvironment(String variable, String value) {
        if (value == null || value.isEmpty()) {
            throw new OptionValueException("--seed-from-env: the environment variable " + variable + " is "
                    + (value == null ? "not set" : "empty") + " (expected: a variable with a value, such as POD_NAME "
                    + "set from the pod's metadata.name, or --seed N)");
        }
        return SeedHash.of(value);
    }

    /** Where the operations listener is to listen; null when it is off. */
    private String metricsAddress() {
        return metricsListen == null || metricsListen.equalsIgnoreCase("off") ? null : metricsListen;
    }

    /** A control timeout option's value: a duration above zero. */
    private static Duration controlTimeout(String option, String text) {
        try {
            Duration timeout = Units.parseDuration(text);
            if (!timeout.isZero()) {
                return timeout;
            }
        } catch (IllegalArgumentException e) {
            // answered below, in the option's words
        }
        throw new OptionValueException(option + ": '" + text + "' (expected: a duration > 0, such as 10s or 1.5s)");
    }

    /** A proxy command's session, run with the live view open (or null, when there is none). */
    @FunctionalInterface
    interface LiveSession<E extends Exception> {
        int run(LiveConsole live) throws E;
    }

    /**
     * Runs a proxy command's session: warms the checks up, opens the live view (see
     * {@link #openLiveView}), runs {@code session} with it and closes it after the session, so
     * that its last block shows the final numbers.
     *
     * @return the session's exit code
     */
    <E extends Exception> int runWithLiveView(LiveSession<E> session) throws E {
        checks.warmUp(); // first: what the checks load is then more likely loaded before a short session ends
        LiveConsole live = openLiveView();
        try {
            return session.run(live);
        } finally {
            if (live != null) {
                live.close(); // after the proxy: the last block shows the final numbers
            }
        }
    }

    /**
     * Gives {@code builder} the --rules file, if one was given, and starts it with {@code start}:
     * loaded here, in the command's try, so that a refused file is answered with exit code 2
     * (see {@link StdioCommand#notStarted}).
     *
     * @throws dev.mcpchaos.rules.RuleFileException when the rule file is refused
     * @throws dev.mcpchaos.server.ProxyStartException when the proxy cannot start
     */
    <B extends ChaosBuilder<B>, R> R startWithRules(B builder, Function<B, R> start) {
        if (rules != null) {
            builder.rules(rules);
        }
        return start.apply(builder);
    }

    /**
     * Opens the live view on stderr, unless --quiet was given or stderr is not a terminal (then
     * null). From then on {@code System.err} prints above the view, until it is closed.
     */
    LiveConsole openLiveView() {
        if (quiet) {
            return null;
        }
        // The control endpoint serves /metrics from the registry the view reads: then it must be a Prometheus one.
        return LiveConsole.openIfStderrIsTerminal(controlAddress() != null || metricsAddress() != null);
    }

    /** Where the control API is to listen, as given (or by default); null when it is off. */
    private String controlAddress() {
        String address = control != null ? control : defaultControl;
        return address == null || address.equalsIgnoreCase("off") ? null : address;
    }

    /** Serves the control API on {@code address} unless --control says otherwise. */
    ChaosOptions controlByDefault(String address) {
        this.defaultControl = address;
        return this;
    }

    /**
     * Why {@code file} could not be opened for appending, in words: the JDK's exceptions name only
     * the path ({@code NoSuchFileException: /nonexistent/ev.jsonl}), not which part is wrong.
     */
    static String whyNotWritable(Path file, IOException e) {
        Path parent = file.toAbsolutePath().getParent();
        if (Files.isDirectory(file)) {
            return "it is a directory";
        }
        if (parent != null && !Files.exists(parent)) {
            return "the directory " + parent + " does not exist";
        }
        if (parent != null && !Files.isDirectory(parent)) {
            return parent + " is not a directory";
        }
        if (e instanceof AccessDeniedException) {
            return Files.exists(file) ? "the file is not writable (permission denied)"
                    : "the directory " + parent + " is not writable (permission denied)";
        }
        String reason = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason() : e.getMessage();
        return String.valueOf(reason);
    }

    /** Opens the event log's destination; null when there is none. */
    private OutputStream openEvents(LiveConsole live) throws IOException {
        if (events == null) {
            return null;
        }
        if (events.toString().equals("-")) {
            // Straight to the file descriptor would tear the live view: above it instead.
            return live != null ? live.stderr() : new FileOutputStream(FileDescriptor.err);
        }
        return new BufferedOutputStream(Files.newOutputStream(events,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND));
    }
}
