package dev.mcpchaos.server.cli;


import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.server.live.LiveConsole;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code mcp-chaos stdio [options] -- <command> [args...]}. */
@Command(name = "stdio",
        mixinStandardHelpOptions = true,
        description = {
            "Start an MCP server as a child process and relay newline-delimited JSON-RPC between this "
                    + "process's stdin/stdout and the server's, message by message.",
            "Put it in place of the server command in an MCP client's config. Logs go to stderr: "
                    + "stdout carries the protocol.",
            "Exits with the server's exit code, 2 when the rules file or an option's value is refused (such as a "
                    + "--cwd that does not exist), 127 when the command cannot start; the server is then not started. "
                    + "With --check-fail-on, " + CheckOptions.CHECK_FAILED + " when a check of that severity fired."},
        footer = {"", "Examples:", "  mcp-chaos stdio --log-traffic -- npx -y @modelcontextprotocol/server-everything",
            "  mcp-chaos stdio --rules examples/slow-tool.yaml --seed 42 -- npx -y @modelcontextprotocol/server-everything"})
final class StdioCommand implements Callable<Integer> {

    /** Exit code when the rule file is refused (the server was not started). */
    static final int RULES_REFUSED = 2;

    @Option(names = "--max-line-length", paramLabel = "SIZE", defaultValue = "16MiB",
            description = "Longest message kept; longer lines are discarded, counted and logged. Default: ${DEFAULT-VALUE}.")
    String maxLineLength;

    @Option(names = "--exit-timeout", paramLabel = "DURATION", defaultValue = "5s",
            description = "After the client's input ends and the server's stdin is closed, how long the server "
                    + "gets to exit before SIGTERM. Default: ${DEFAULT-VALUE}.")
    String exitTimeout;

    @Option(names = "--terminate-timeout", paramLabel = "DURATION", defaultValue = "5s",
            description = "How long the server gets to exit after SIGTERM before SIGKILL. Default: ${DEFAULT-VALUE}.")
    String terminateTimeout;

    @CommandLine.Mixin
    ChaosOptions chaos = new ChaosOptions();

    @Option(names = "--journal-dump", paramLabel = "FILE",
            description = "When the server has exited, write the journal here, whole, as GET /journal serves it (see "
                    + "docs/journal.md): what mcp-chaos drill reads back over stdio. Needs the journal on "
                    + "(--journal N). An existing directory: each proxy started with it writes a file of its own "
                    + "there, journal-PID.json, and keeps journal-PID.running there while it runs (a client may start the "
                    + "server command more than once).")
    Path journalDump;

    @Option(names = "--journal-content",
            description = "Keep each message's JSON text in its journal entry (its 'message'): what the drill's "
                    + "2026-07-28 graders read (_meta, requestState). Default: no content.")
    boolean journalContent;

    @Option(names = "--cwd", paramLabel = "DIR", description = "The server's working directory. Default: this one.")
    Path directory;

    @Option(names = {"-e", "--env"}, paramLabel = "NAME=VALUE",
            description = "Add a variable to the environment the server inherits. Repeatable.")
    Map<String, String> environment = new LinkedHashMap<>();

    @Parameters(paramLabel = "COMMAND", arity = "1..*",
            description = "The server command and its arguments, after --.")
    List<String> command;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Where the client's messages come from and go to: null for this process's stdin and stdout. */
    private final InputStream clientIn;
    private final OutputStream clientOut;

    StdioCommand() {
        this(null, null);
    }

    /** A command whose client is on these streams instead of stdin and stdout (for tests). */
    StdioCommand(InputStream clientIn, OutputStream clientOut) {
        this.clientIn = clientIn;
        this.clientOut = clientOut;
    }

    @Override
    public Integer call() {
        // run() points System.out at System.err once the view is open, so that a stray print lands above it too.
        return chaos.runWithLiveView(this::run);
    }

    private int run(LiveConsole live) {
        if (clientOut == null) {
            // stdout belongs to the protocol: nothing else may print there, whatever a library does.
            System.setOut(System.err);
        }
        McpChaosProxy.StdioBuilder builder;
        try {
            long maxLine = Units.parseSize(maxLineLength);
            if (maxLine < 1 || maxLine > Integer.MAX_VALUE - 2) {
                throw new IllegalArgumentException("--max-line-length: " + maxLineLength
                        + " (expected: 1B to 2GiB)");
            }
            builder = McpChaosProxy.stdio(command)
                    .maxLineLength((int) maxLine)
                    .exitTimeout(Units.parseDuration(exitTimeout))
                    .terminateTimeout(Units.parseDuration(terminateTimeout))
                    .environment(environment);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException(e.getMessage());
        }
        if (clientIn != null) {
            builder.clientInput(clientIn);
        }
        if (clientOut != null) {
            builder.clientOutput(clientOut);
        }
        if (directory != null) {
            builder.directory(requireDirectory(directory));
        }
        chaos.applyTo(builder, live);
        builder.journalContent(journalContent);
        if (live != null) {
            builder.serverErrorOutput(live.stderr()); // the server's log lines above the view, whole
        }
        // Signals are caught from before the server starts: one that arrives while it starts is
        // passed on as soon as there is a server to pass it to, instead of killing the proxy alone.
        SignalRelay signals = new SignalRelay();
        signals.install("TERM");
        signals.install("INT");
        // Before the server starts: from here on a drill waiting for this proxy's journal knows of it.
        Path dumpTo = journalDump == null ? null : dumpFile(journalDump);
        McpChaosProxy.Running proxy;
        try {
            proxy = chaos.startWithRules(builder, McpChaosProxy.StdioBuilder::start);
        } catch (RuleFileException | ProxyStartException e) {
            if (dumpTo != null && !dumpTo.equals(journalDump)) {
                deleteQuietly(running(dumpTo));
            }
            return notStarted(e);
        }
        signals.attach(proxy);
        if (live != null) {
            live.start(proxy.rules());
        }
        int code = 1; // kept only if waiting for the server fails, and then the failure goes on
        try {
            code = proxy.exitCode().join();
        } finally {
            proxy.close(); // the server has exited: this only stops the control endpoint
            code = chaos.checks.finish(System.err, code, proxy); // after the close: the referee has seen everything
            if (dumpTo != null) {
                dumpJournal(proxy, dumpTo);
                if (!dumpTo.equals(journalDump)) {
                    deleteQuietly(running(dumpTo));
                }
            }
        }
        return code;
    }

    /**
     * Where the journal goes: {@code target} itself, or in a directory, {@code journal-PID.json}
     * of this process, with {@code journal-PID.running} made there now, so that the drill, which
     * cannot tell how often a client starts the server command (a TypeScript SDK 2.4 client probes
     * {@code server/discover} on a process of its own first; a 2026-07-28 client restarts a server
     * that died), waits until every proxy it started has written its journal.
     */
    static Path dumpFile(Path target) {
        if (!Files.isDirectory(target)) {
            return target;
        }
        Path file = target.resolve("journal-" + ProcessHandle.current().pid() + ".json");
        try {
            Files.writeString(running(file), "", StandardCharsets.UTF_8);
        } catch (IOException e) {
            System.err.println("mcp-chaos: --journal-dump: '" + target + "' cannot be written: " + e.getMessage());
        }
        return file;
    }

    /** The marker beside a dump in a directory while its proxy runs: journal-PID.running. */
    static Path running(Path dump) {
        String name = dump.getFileName().toString();
        return dump.resolveSibling(name.substring(0, name.length() - ".json".length()) + ".running");
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            System.err.println("mcp-chaos: --journal-dump: '" + file + "' cannot be deleted: " + e.getMessage());
        }
    }

    /**
     * Writes the journal to {@code file} whole: to a file beside it, then renamed into place, so
     * that a reader waiting for the file (the drill) never reads half of it.
     */
    static void dumpJournal(McpChaosProxy.Running proxy, Path file) {
        try {
            String json = JournalJson.write(proxy.journal().snapshot());
            Path partial = file.resolveSibling(file.getFileName() + ".partial");
            Files.writeString(partial, json, StandardCharsets.UTF_8);
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IllegalStateException journalOff) {
            System.err.println("mcp-chaos: --journal-dump: the journal is off (expected: --journal N with it)");
        } catch (IOException e) {
            System.err.println("mcp-chaos: --journal-dump: '" + file + "' cannot be written: " + e.getMessage());
        }
    }

    /**
     * Says on stderr why the proxy did not start, a rule file refused or a {@link ProxyStartException},
     * and gives the exit code for it: {@link #RULES_REFUSED} for the rule file, else {@link #exitCode}.
     */
    static int notStarted(RuntimeException e) {
        System.err.println("mcp-chaos: " + e.getMessage());
        return e instanceof ProxyStartException failure ? exitCode(failure) : RULES_REFUSED;
    }

    /**
     * The exit code for a proxy that could not start: 2 for rules refused (as for a bad rule
     * file), 127 for a server command that cannot be started (as a shell says), 1 for the rest.
     */
    static int exitCode(ProxyStartException e) {
        switch (e.reason()) {
            case RULES:
                return RULES_REFUSED;
            case SERVER_COMMAND:
                return 127;
            default:
                return 1;
        }
    }

    /**
     * {@code dir}, when it is a directory. Checked here, before anything starts, so that the
     * answer names --cwd: starting the server there would fail with the JDK's "No such file or
     * directory", which reads as if the command were missing.
     */
    static Path requireDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new OptionValueException("--cwd: '" + dir + "' " + (Files.exists(dir) ? "is not a directory"
                    : "does not exist") + " (expected: the directory to start the server in)");
        }
        return dir;
    }

    /**
     * Passes TERM and INT on to the server, holding those that come before it started. A handler
     * of its own, not a lambda: installed before the server is started, where nothing links a
     * lambda it can do without.
     */
    private static final class SignalRelay implements SignalHandler {
        private McpChaosProxy.Running proxy;
        private final List<String> early = new ArrayList<>();

        void install(String name) {
            try {
                Signal.handle(new Signal(name), this);
            } catch (IllegalArgumentException e) {
                // The platform has no such signal, or the JVM reserves it: leave its default.
            }
        }

        @Override
        public void handle(Signal signal) {
            onSignal(signal.getName()); // the name it was made with: TERM or INT
        }

        private synchronized void onSignal(String name) {
            if (proxy != null) {
                proxy.signal(name);
            } else {
                early.add(name);
            }
        }

        synchronized void attach(McpChaosProxy.Running running) {
            proxy = running;
            early.forEach(running::signal);
            early.clear();
        }
    }
}
