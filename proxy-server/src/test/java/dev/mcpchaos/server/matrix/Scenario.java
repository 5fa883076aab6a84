package dev.mcpchaos.server.matrix;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Runs one cell: starts the proxy through its builder with the cell's one rule (named
 * {@code cell}) in front of a scripted peer, plays the shape's traffic, and records an
 * {@link Outcome}. Stdio: the server is a {@code bash} script that answers exact lines and logs
 * every line it reads on stderr; the client writes and reads the proxy's pipes. HTTP: the
 * upstream is a {@link ScriptedMcpUpstream}; the client a {@link RawExchange} per request.
 */
final class Scenario {

    static final String RULE = "cell";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long an HTTP exchange may take before it counts as left hanging. */
    static final Duration HTTP_DEADLINE = Duration.ofMillis(2_500);
    /** Stdio, server-to-client request: the client stops waiting this long after the last line. */
    private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(800);
    /**
     * HTTP: after a fault acted on the target, how long before the witness leaves when the target
     * neither reached the upstream nor was answered: short for the faults that hold a message (so
     * that the witness is sent while the target is held, and must wait behind it), longer for the
     * others (a target forwarded slowly, on a busy machine, must not be raced by the witness).
     */
    private static final long HOLD_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(60);
    private static final long PASS_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final Set<String> HOLDING_FAULTS = Set.of("latency", "throttle", "reorder");

    private Scenario() {
    }

    /** The rule file of a cell: one rule picking the shape's target with this fault. */
    static String rules(Shape shape, String faultType, String faultParams) {
        return "rules:\n  - name: " + RULE + "\n    match: " + shape.match + "\n    fault: {type: " + faultType
                + (faultParams.isEmpty() ? "" : ", " + faultParams) + "}\n";
    }

    /** Runs the shape's traffic through a proxy whose one rule is off: what the referee says with no fault. */
    static Outcome runClean(Shape shape) {
        RuleSet rules = RuleSet.parse(rules(shape, "drop", "").replace("    match:", "    enabled: false\n    match:"),
                "matrix.yaml");
        try {
            return shape.isStdio() ? stdio(shape, rules, false) : http(shape, rules, PASS_GRACE_NANOS, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs the shape's traffic through a proxy with one rule: this fault, these parameters (YAML
     * flow mapping entries, such as {@code latency: 200ms}).
     */
    static Outcome run(Shape shape, String faultType, String faultParams) {
        RuleSet rules = RuleSet.parse(rules(shape, faultType, faultParams), "matrix.yaml");
        try {
            // A crash needs the server alive when the target passes: the client then waits for the
            // traffic to settle before it ends its input (which makes a stdio server exit).
            return shape.isStdio() ? stdio(shape, rules, faultType.equals("crash"))
                    : http(shape, rules, HOLDING_FAULTS.contains(faultType) ? HOLD_GRACE_NANOS : PASS_GRACE_NANOS,
                            faultType.startsWith("resume_") ? "g-0" : null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---- stdio ---------------------------------------------------------------------------------------

    /** The scripted server for a stdio shape: exact lines in, exact lines out. */
    static String stdioServer(Shape shape) {
        StringBuilder cases = new StringBuilder();
        switch (shape) {
            case STDIO_CLIENT_REQUEST:
            case STDIO_SERVER_RESPONSE:
                // The target as sent, or as a fault that keeps it valid JSON-RPC made it.
                cases.append(quote(Msg.T_CALL)).append('|').append(quote(Expected.drift(Msg.T_CALL))).append('|')
                        .append(quote("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"_meta\":"
                                + "{\"dev.mcpchaos/padding\":\"")).append('*')
                        .append(quote("\"},\"name\":\"target\",\"arguments\":{\"n\":1}}}"))
                        .append(") say ").append(quote(Msg.T_RESULT)).append(" ;;\n");
                cases.append(quote(Msg.W_CALL)).append(") say ").append(quote(Msg.W_RESULT)).append(" ;;\n");
                break;
            case STDIO_SERVER_NOTIFICATION:
                // Both lines in one write (coreutils' printf buffers a pipe until it exits): the
                // result is on its way before the notification reaches the proxy, so a crash at
                // the notification must still let it through (bash's builtin writes per line).
                cases.append(quote(Msg.T_CALL)).append(") /usr/bin/printf '%s\\n' ").append(quote(Msg.PROGRESS)).append(' ')
                        .append(quote(Msg.T_RESULT)).append(" ;;\n");
                break;
            case STDIO_SERVER_REQUEST:
                cases.append(quote(Msg.ASK)).append(") pending=1; say ").append(quote(Msg.ROOTS)).append(' ')
                        .append(quote(Msg.NOTE_AFTER)).append(" ;;\n");
                // Answered once: a second answer for s1 is for a request no longer pending.
                cases.append("*'\"id\":\"s1\",\"result\"'*) if [ \"$pending\" = 1 ]; then pending=0; say ")
                        .append(quote(Msg.ASK_ANSWERED)).append("; fi ;;\n");
                cases.append("*'\"id\":\"s1\",\"error\"'*) if [ \"$pending\" = 1 ]; then pending=0; say ")
                        .append(quote(Msg.ASK_ERRORED)).append("; fi ;;\n");
                break;
            default:
                throw new IllegalArgumentException("not a stdio shape: " + shape);
        }
        return "say() { printf '%s\\n' \"$@\"; }\n"
                + "while IFS= read -r line || [ -n \"$line\" ]; do\n"
                + "  printf 'IN %s\\n' \"$line\" >&2\n"
                + "  case \"$line\" in\n"
                + "    '') ;;\n"
                + cases
                + "    *) say " + quote(Msg.PARSE_ERROR) + " ;;\n"
                + "  esac\n"
                + "done\n";
    }

    private static String quote(String text) {
        if (text.indexOf('\'') >= 0) {
            throw new IllegalArgumentException("no single quotes in scripted messages: " + text);
        }
        return '\'' + text + '\'';
    }

    private static Outcome stdio(Shape shape, RuleSet rules, boolean closeWhenQuiet)
            throws IOException, InterruptedException {
        Outcome outcome = new Outcome(shape);
        Clock clock = new Clock();
        Referee referee = new Referee();
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Pipe toProxy = Pipe.open();
        Pipe fromProxy = Pipe.open();
        OutputStream client = Channels.newOutputStream(toProxy.sink());
        StderrLines serverLog = new StderrLines();
        McpChaosProxy.Running proxy;
        try {
            proxy = McpChaosProxy.stdio(List.of("bash", "-c", stdioServer(shape)))
                    .clientInput(Channels.newInputStream(toProxy.source()))
                    .clientOutput(Channels.newOutputStream(fromProxy.sink()))
                    .serverErrorOutput(serverLog)
                    .exitTimeout(Duration.ofSeconds(2))
                    .terminateTimeout(Duration.ofSeconds(1))
                    .rules(rules)
                    .seed(1)
                    .faultListener(events::add)
                    .metrics(registry)
                    .check(referee)
                    .start();
        } catch (ProxyStartException e) {
            if (e.reason() != ProxyStartException.Reason.RULES) {
                throw new AssertionError("bash did not start", e);
            }
            outcome.refusal = e.getMessage();
            client.close();
            return outcome;
        }
        try {
            StdioClient reader = new StdioClient(clock, Channels.newInputStream(fromProxy.source()), client, shape);
            reader.start();
            outcome.t0 = clock.now();
            if (shape == Shape.STDIO_SERVER_REQUEST) {
                reader.send(Msg.ASK);
                // Answers the server's requests as they come (see StdioClient); stops when the
                // call is answered, or once nothing more came for a while.
                long start = clock.now();
                while (!reader.callAnswered && clock.now() - start < TimeUnit.SECONDS.toNanos(6)
                        && (reader.lastLineAt < 0 ? clock.now() - start < TimeUnit.SECONDS.toNanos(3)
                        : clock.now() - reader.lastLineAt < QUIET_NANOS)) {
                    Thread.sleep(10);
                }
            } else {
                reader.send(Msg.T_CALL);
                if (shape != Shape.STDIO_SERVER_NOTIFICATION) {
                    reader.send(Msg.W_CALL);
                }
                long sent = clock.now();
                while (closeWhenQuiet && reader.eofAt < 0 && clock.now() - sent < TimeUnit.SECONDS.toNanos(5)
                        && clock.now() - Math.max(sent, reader.lastLineAt) < QUIET_NANOS) {
                    Thread.sleep(10);
                }
            }
            reader.closeInput(); // the end of the client's input ends the session, as the MCP lifecycle says
            try {
                outcome.exitCode = proxy.exitCode().get(10, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                outcome.exitCode = null;
            }
            reader.join(5_000);
            synchronized (reader) {
                outcome.clientLines.addAll(reader.lines);
                outcome.eofAt = reader.eofAt;
            }
            outcome.stats = stats(proxy.rules().stats());
        } finally {
            proxy.close();
        }
        outcome.verdict = referee.report();
        serverLog.lines().stream().filter(l -> l.startsWith("IN ")).map(l -> l.substring(3))
                .forEach(outcome.serverLines::add);
        outcome.events.addAll(events);
        outcome.injectedMeter = injected(registry);
        return outcome;
    }

    /** The client on the proxy's pipes: records every line, and plays the client's part of the shape. */
    private static final class StdioClient extends Thread {
        private final Clock clock;
        private final InputStream in;
        private final OutputStream out;
        private final Shape shape;
        final List<Outcome.Line> lines = new CopyOnWriteArrayList<>();
        volatile long lastLineAt = -1;
        volatile long eofAt = -1;
        volatile boolean callAnswered;
        private boolean inputClosed;

        StdioClient(Clock clock, InputStream in, OutputStream out, Shape shape) {
            super("matrix-stdio-client");
            setDaemon(true);
            this.clock = clock;
            this.in = in;
            this.out = out;
            this.shape = shape;
        }

        synchronized void send(String line) throws IOException {
            if (!inputClosed) {
                out.write((line + "\n").getBytes(UTF_8));
                out.flush();
            }
        }

        synchronized void closeInput() throws IOException {
            inputClosed = true;
            out.close();
        }

        @Override
        public void run() {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            long firstAt = -1;
            byte[] buffer = new byte[8192];
            try {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    for (int i = 0; i < n; i++) {
                        if (firstAt < 0) {
                            firstAt = clock.now();
                        }
                        if (buffer[i] != '\n') {
                            line.write(buffer[i]);
                            continue;
                        }
                        long at = clock.now();
                        String text = line.toString(UTF_8);
                        line.reset();
                        lines.add(new Outcome.Line(text, firstAt, at));
                        lastLineAt = at;
                        firstAt = -1;
                        react(text);
                    }
                }
            } catch (IOException e) {
                // the proxy closed its side
            }
            if (line.size() > 0) {
                lines.add(new Outcome.Line(line.toString(UTF_8) + "<no newline>", firstAt, clock.now()));
            }
            eofAt = clock.now();
        }

        /** The client's part: answer the server's roots/list (a real client answers every copy it gets). */
        private void react(String text) throws IOException {
            if (shape != Shape.STDIO_SERVER_REQUEST) {
                return;
            }
            JsonNode message;
            try {
                message = JSON.readTree(text);
            } catch (IOException e) {
                return; // a real client logs a line it cannot parse and reads on
            }
            if (message == null || !message.isObject()) {
                return;
            }
            if ("roots/list".equals(message.path("method").asText(null)) && message.has("id")) {
                send("{\"jsonrpc\":\"2.0\",\"id\":" + message.get("id") + ",\"result\":{\"roots\":[]}}");
            } else if (message.has("id") && message.get("id").asInt(-1) == 1 && !message.has("method")) {
                callAnswered = true;
            }
        }
    }

    /** The server's stderr, split into lines. */
    private static final class StderrLines extends OutputStream {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            bytes.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            bytes.write(b, off, len);
        }

        synchronized List<String> lines() {
            String text = bytes.toString(UTF_8);
            return text.isEmpty() ? List.of() : List.of(text.split("\n"));
        }
    }

    // ---- HTTP ----------------------------------------------------------------------------------------

    /**
     * @param lastEventId the {@code Last-Event-ID} the GET stream is opened with (a resumed stream,
     *     for the faults that act on those only), or null
     */
    private static Outcome http(Shape shape, RuleSet rules, long witnessGrace, String lastEventId)
            throws IOException, InterruptedException {
        Outcome outcome = new Outcome(shape);
        Clock clock = new Clock();
        Referee referee = new Referee();
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        boolean sessionless = shape == Shape.HTTP_SESSIONLESS_POST;
        ScriptedMcpUpstream.TargetAnswer answer = switch (shape) {
            case HTTP_SSE_FINAL -> ScriptedMcpUpstream.TargetAnswer.SSE_FINAL;
            case HTTP_SSE_MID -> ScriptedMcpUpstream.TargetAnswer.SSE_PROGRESS;
            default -> ScriptedMcpUpstream.TargetAnswer.JSON;
        };
        try (ScriptedMcpUpstream upstream = new ScriptedMcpUpstream(clock, answer, sessionless ? null : "s-1")) {
            HttpProxyBuilder.RunningHttp proxy;
            try {
                proxy = McpChaosProxy.http(upstream.endpoint())
                        .rules(rules)
                        .seed(1)
                        .faultListener(events::add)
                        .metrics(registry)
                        .check(referee)
                        .start();
            } catch (ProxyStartException e) {
                if (e.reason() != ProxyStartException.Reason.RULES) {
                    throw e;
                }
                outcome.refusal = e.getMessage();
                return outcome;
            }
            try {
                int port = proxy.address().getPort();
                long deadline = HTTP_DEADLINE.toNanos();
                String session = null;
                if (!sessionless) {
                    RawExchange init = RawExchange.post("init", clock, port, null, Msg.INIT, clock.now() + deadline)
                            .await();
                    outcome.exchanges.put("init", init);
                    session = init.header("Mcp-Session-Id");
                }
                outcome.t0 = clock.now();
                if (shape == Shape.HTTP_GET_EVENT) {
                    outcome.exchanges.put("get",
                            RawExchange.get("get", clock, port, session, lastEventId, clock.now() + deadline)
                                    .await());
                } else {
                    RawExchange target = RawExchange.post("target", clock, port, session, Msg.T_CALL,
                            clock.now() + deadline);
                    outcome.exchanges.put("target", target);
                    boolean requestShape = shape == Shape.HTTP_POST_REQUEST || sessionless;
                    int before = upstream.postBodies().size();
                    // The witness leaves once the target is past the proxy: at the upstream (for a
                    // request), answered, or held or swallowed by a fault for a moment (so that a
                    // target the fault forwards at once is not raced by the witness).
                    long[] firstEvent = {-1};
                    awaitAtMost(Duration.ofMillis(1_500), () -> {
                        if (firstEvent[0] < 0 && !events.isEmpty()) {
                            firstEvent[0] = System.nanoTime();
                        }
                        return target.isFinished() || requestShape && upstream.postBodies().size() > before
                                || firstEvent[0] >= 0 && System.nanoTime() - firstEvent[0] > witnessGrace;
                    });
                    RawExchange witness = RawExchange.post("witness", clock, port, session, Msg.W_CALL,
                            clock.now() + deadline);
                    outcome.exchanges.put("witness", witness);
                    target.await();
                    witness.await();
                }
                // The session goes on: one more call after the cell's traffic.
                outcome.exchanges.put("ping",
                        RawExchange.post("ping", clock, port, session, Msg.PING, clock.now() + deadline).await());
                outcome.stats = stats(proxy.rules().stats());
            } finally {
                proxy.close();
            }
            outcome.verdict = referee.report();
            outcome.upstream.addAll(upstream.requests);
            outcome.upstreamSent.putAll(upstream.sent);
        }
        outcome.exchanges.values().forEach(RawExchange::close);
        outcome.events.addAll(events);
        outcome.injectedMeter = injected(registry);
        return outcome;
    }

    private static void awaitAtMost(Duration bound, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < end) {
            Thread.sleep(5);
        }
    }

    private static RuleStats stats(List<RuleStats> all) {
        return all.stream().filter(s -> s.name().equals(RULE)).findFirst().orElse(null);
    }

    private static double injected(SimpleMeterRegistry registry) {
        Counter counter = registry.find(ProxyMetrics.FAULTS_INJECTED).tag("rule", RULE).counter();
        return counter == null ? 0 : counter.count();
    }
}
