package dev.mcpchaos.server.cli;

import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.replay.HttpReplay;
import dev.mcpchaos.server.replay.MatchMode;
import dev.mcpchaos.server.replay.Matching;
import dev.mcpchaos.server.replay.OnExhausted;
import dev.mcpchaos.server.replay.ReplayFile;
import dev.mcpchaos.server.replay.StdioReplay;
import dev.mcpchaos.server.replay.Timing;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code mcp-chaos replay FILE...}: plays the recorded server over stdin and stdout, behind the
 * same proxy (rules, seed, journal, metrics, control API) as {@code mcp-chaos stdio}.
 */
@Command(name = "replay",
        mixinStandardHelpOptions = true,
        description = {"Play the server recorded in cassettes (see docs/record-replay.md) on stdin and stdout: a "
                + "drop-in for a server command in an MCP client's config. Each request gets what was recorded for "
                + "the same method and params (_meta, the id and progress tokens aside); repeats in recorded order, "
                + "then the last again (or an error, --on-exhausted error); a request with no recording gets error "
                + "-32601 naming the closest recorded one. --match method|sequential|strict matches otherwise; "
                + "--timing recorded sends answers at their recorded delays. A transcript of direction-and-raw "
                + "lines (what mcp-chaos import reads) is imported on the fly.",
            "The replayed server sits behind the same proxy as a real one: --rules and --seed apply faults to its "
                + "traffic, and the journal, metrics and control API work as for mcp-chaos stdio."},
        footer = {"", "Examples:", "  mcp-chaos replay cassettes/everything.ndjson",
            "  mcp-chaos replay cassettes/everything.ndjson --rules examples/slow-tool.yaml --seed 42",
            "  mcp-chaos replay cassettes/everything.ndjson --timing scaled:0.5 --match sequential"})
final class ReplayCommand implements Callable<Integer> {

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Cassettes to play, in this order; a transcript "
            + "({\"direction\":\"c2s\",\"raw\":\"...\"} or > / < lines) is imported on the fly as mcp-chaos import does.")
    List<Path> files;

    @Option(names = "--fail-on-unmatched",
            description = "Exit with code 1 at the end when any request had no recording (for CI).")
    boolean failOnUnmatched;

    @Option(names = "--on-exhausted", paramLabel = "last|error", defaultValue = "last",
            description = "What a repeat of a request gets once all its recordings were served: the last one again "
                    + "(default), or error -32601 (counted as unmatched).")
    String onExhausted;

    @Option(names = "--timing", paramLabel = "none|recorded|scaled:F", defaultValue = "none",
            description = "When answers go out: at once (default), at the recorded delay after the request's arrival "
                    + "(the progress and other notifications the server sent for it at theirs too), or at those delays "
                    + "times F (scaled:0.5 halves them, scaled:2 doubles them; F > 0).")
    String timing;

    @Option(names = "--match", paramLabel = "default|method|sequential|strict", defaultValue = "default",
            description = "How a request finds its recording: by method and params without _meta (default); by "
                    + "method alone, each method's recordings in recorded order whatever the params (method; "
                    + "tools/call and prompts/get by their name too); the recorded requests in recorded order, any "
                    + "other getting error -32601 naming the one expected next (sequential); or the whole message "
                    + "but its id, _meta included (strict).")
    String match;

    @Option(names = "--match-ignore", paramLabel = "PATH",
            description = "A path left out when matching (JSON pointer or dotted glob, as --redact-path), such as "
                    + "/params/arguments/time; repeatable.")
    List<String> matchIgnore = new ArrayList<>();

    @Option(names = "--http", paramLabel = "HOST:PORT",
            description = "Serve the cassettes over Streamable HTTP on this address (endpoint /mcp) instead of stdio: "
                    + "a fresh Mcp-Session-Id per initialize, answers as JSON or SSE events as recorded. Runs until "
                    + "SIGTERM or SIGINT.")
    String http;

    @Option(names = "--verify",
            description = "Check a live stdio server against the cassette instead of playing it: "
                    + "mcp-chaos replay FILE --verify -- COMMAND... (see docs/record-replay.md, Verify).")
    boolean verify;

    @Option(names = "--verify-url", paramLabel = "URL",
            description = "Check a live Streamable HTTP server against the cassette instead of playing it: "
                    + "mcp-chaos replay FILE --verify-url http://127.0.0.1:3001/mcp (a session per recorded session; "
                    + "sessionless 2026-07-28 requests with their recorded Mcp-* headers).")
    String verifyUrl;

    @Option(names = "--update",
            description = "With --verify or --verify-url: re-record the answers that differ from the live server's "
                    + "into the cassette (redacted, recorded placeholders kept, written atomically); exit 0 unless a "
                    + "request went unanswered.")
    boolean update;

    @Option(names = "--ignore", paramLabel = "PATH",
            description = "With --verify: a path not compared (JSON pointer or dotted glob, as --redact-path); "
                    + "repeatable, added to the defaults.")
    List<String> verifyIgnore = new ArrayList<>();

    @Option(names = "--verify-report", paramLabel = "FILE",
            description = "With --verify: also write the outcome as JSON to FILE.")
    Path verifyReport;

    @CommandLine.Mixin
    ChaosOptions chaos = new ChaosOptions();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Where messages for the user go: picocli's error writer, or stderr when FastStart filled this command. */
    private java.io.PrintWriter err() {
        return spec != null ? spec.commandLine().getErr() : new java.io.PrintWriter(System.err, true);
    }

    /** The client's side; null: this process's stdin and stdout. */
    private final InputStream clientIn;
    private final OutputStream clientOut;

    ReplayCommand() {
        this(null, null);
    }

    /** For tests: the client on these streams instead of stdin and stdout. */
    ReplayCommand(InputStream clientIn, OutputStream clientOut) {
        this.clientIn = clientIn;
        this.clientOut = clientOut;
    }

    @Override
    public Integer call() throws IOException {
        OutputStream protocol = clientOut;
        if (protocol == null) {
            protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
            System.setOut(System.err); // stdout belongs to the protocol
        }
        if (verify && verifyUrl != null) {
            throw new OptionValueException("--verify and --verify-url: one or the other (expected: --verify -- COMMAND "
                    + "for a stdio server, --verify-url URL for an HTTP one)");
        }
        if (verifyUrl != null) {
            java.net.URI url;
            try {
                url = HttpCommand.parseUpstream(verifyUrl);
            } catch (OptionValueException e) {
                throw new OptionValueException(e.getMessage().replaceFirst("^--upstream", "--verify-url"));
            }
            return new dev.mcpchaos.server.replay.verify.VerifyCli(files, verifyIgnore, verifyReport, url).update(update)
                    .run();
        }
        if (verify) {
            return new dev.mcpchaos.server.replay.verify.VerifyCli(files, verifyIgnore, verifyReport).update(update).run();
        }
        if (update) {
            throw new OptionValueException("--update: only with --verify or --verify-url (expected: replay FILE "
                    + "--verify --update -- COMMAND...)");
        }
        chaos.checks.warmUp(); // first: what the checks load is then more likely loaded before a short session ends
        OnExhausted exhausted = parseOnExhausted(onExhausted);
        Timing pace = parseTiming(timing);
        Matching matching = parseMatching(match, matchIgnore);
        List<Cassette> cassettes = new ArrayList<>();
        for (Path file : files) {
            try {
                cassettes.add(readFile(file, matching));
            } catch (CassetteException e) {
                err().println("mcp-chaos: " + e.getMessage());
                return StdioCommand.RULES_REFUSED;
            } catch (IOException e) {
                err().println("mcp-chaos: " + file + ": cannot be read: " + e.getMessage()
                        + " (expected: a cassette file, or a transcript mcp-chaos import reads)");
                return StdioCommand.RULES_REFUSED;
            }
        }
        if (http != null) {
            return serveHttp(cassettes, exhausted, pace, matching);
        }
        StdioReplay replay = new StdioReplay(cassettes, exhausted, pace, matching);
        McpChaosProxy.StdioBuilder builder = McpChaosProxy.replay(replay).clientOutput(protocol);
        if (clientIn != null) {
            builder.clientInput(clientIn); // else the proxy's stdin, which the proxy closes at the end
        }
        chaos.applyTo(builder, null);
        McpChaosProxy.Running proxy;
        try {
            proxy = chaos.startWithRules(builder, McpChaosProxy.StdioBuilder::start);
        } catch (RuleFileException | ProxyStartException e) {
            return StdioCommand.notStarted(e);
        }
        int code = 1; // kept only if waiting for the end fails, and then the failure goes on
        try {
            // The replayed server's own code first: 137 after a crash rule (143 with signal TERM),
            // as mcp-chaos stdio gives a killed server's.
            int served = proxy.exitCode().join();
            code = served != 0 ? served : failOnUnmatched && replay.unmatched() > 0 ? 1 : 0;
        } finally {
            proxy.close();
            code = chaos.checks.finish(System.err, code, proxy); // after the close: the referee has seen everything
        }
        return code;
    }

    private int serveHttp(List<Cassette> cassettes, OnExhausted exhausted, Timing pace, Matching matching)
            throws IOException {
        java.net.InetSocketAddress address;
        try {
            address = HttpCommand.parseAddress("--http", http);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException(e.getMessage());
        }
        HttpReplay replay = new HttpReplay(cassettes, exhausted, pace, matching);
        HttpProxyBuilder.RunningHttp proxy;
        try {
            HttpProxyBuilder builder = McpChaosProxy.replay(replay).listen(address);
            chaos.applyTo(builder, null);
            proxy = chaos.startWithRules(builder, HttpProxyBuilder::start);
        } catch (RuleFileException | ProxyStartException e) {
            return StdioCommand.notStarted(e);
        }
        System.err.println("mcp-chaos: replaying " + files.size() + " cassette(s) on " + proxy.mcpUrl());
        java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
        StopSignals.handle(name -> stop.countDown());
        try (proxy) {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // after the close: the referee has seen everything
        int code = chaos.checks.finish(System.err, failOnUnmatched && replay.unmatched() > 0 ? 1 : 0, proxy);
        System.err.println("mcp-chaos: replay stopped; " + requests(replay.served()) + " answered from the cassettes, "
                + replay.unmatched() + " without a recording");
        return code;
    }

    /** A cassette, or a transcript imported on the fly as {@code mcp-chaos import} does, saying so on stderr. */
    private Cassette readFile(Path file, Matching matching) throws IOException {
        ReplayFile read = ReplayFile.read(file);
        if (read.imported()) {
            java.io.PrintWriter err = err();
            int messages = read.importResult().messages();
            int secrets = read.importResult().secrets();
            err.println("mcp-chaos: replay: " + file + " is a transcript (direction/raw lines), imported on the fly ("
                    + messages + " message" + (messages == 1 ? "" : "s") + ", " + secrets + " secret"
                    + (secrets == 1 ? "" : "s") + " redacted); mcp-chaos import writes it as a cassette");
            String noParams = ImportCommand.noParamsWarning(file.toString(), read.requestsWithoutParams());
            if (noParams != null && matching.mode() != MatchMode.METHOD) {
                err.println(noParams);
            }
        }
        return read.cassette();
    }

    static OnExhausted parseOnExhausted(String text) {
        try {
            return OnExhausted.valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--on-exhausted: '" + text + "' (expected: last or error)");
        }
    }

    static Timing parseTiming(String text) {
        try {
            return Timing.parse(text);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--timing: " + e.getMessage());
        }
    }

    static Matching parseMatching(String mode, List<String> ignore) {
        MatchMode parsed;
        try {
            parsed = MatchMode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--match: '" + mode + "' (expected: default, method, sequential or strict)");
        }
        try {
            return Matching.of(parsed, ignore);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--match-ignore: " + e.getMessage());
        }
    }

    /** {@code 1 request}, {@code 2 requests}. */
    static String requests(long n) {
        return n + (n == 1 ? " request" : " requests");
    }
}
