package dev.mcpchaos.server.matrix;

import static dev.mcpchaos.server.matrix.Expect.PRIMING_G;
import static dev.mcpchaos.server.matrix.Expect.PRIMING_T;
import static dev.mcpchaos.server.matrix.Expect.closedNoBytes;
import static dev.mcpchaos.server.matrix.Expect.ev;
import static dev.mcpchaos.server.matrix.Expect.evRetry;
import static dev.mcpchaos.server.matrix.Expect.hanging;
import static dev.mcpchaos.server.matrix.Expect.json;
import static dev.mcpchaos.server.matrix.Expect.sse;
import static dev.mcpchaos.server.matrix.Expect.status;
import static dev.mcpchaos.server.matrix.Msg.ASK;
import static dev.mcpchaos.server.matrix.Msg.ASK_ANSWERED;
import static dev.mcpchaos.server.matrix.Msg.ASK_ERRORED;
import static dev.mcpchaos.server.matrix.Msg.NOTE_AFTER;
import static dev.mcpchaos.server.matrix.Msg.NOTE_T;
import static dev.mcpchaos.server.matrix.Msg.NOTE_W;
import static dev.mcpchaos.server.matrix.Msg.PARSE_ERROR;
import static dev.mcpchaos.server.matrix.Msg.PING;
import static dev.mcpchaos.server.matrix.Msg.PROGRESS;
import static dev.mcpchaos.server.matrix.Msg.ROOTS;
import static dev.mcpchaos.server.matrix.Msg.ROOTS_ANSWER;
import static dev.mcpchaos.server.matrix.Msg.T_CALL;
import static dev.mcpchaos.server.matrix.Msg.T_RESULT;
import static dev.mcpchaos.server.matrix.Msg.W_CALL;
import static dev.mcpchaos.server.matrix.Msg.W_RESULT;
import static dev.mcpchaos.server.matrix.RawExchange.End.CLEAN;
import static dev.mcpchaos.server.matrix.RawExchange.End.CUT;
import static dev.mcpchaos.server.matrix.RawExchange.End.OPEN;
import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpchaos.rules.fault.FaultRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.opentest4j.TestAbortedException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The fault matrix: every fault type {@link FaultRegistry} knows, on every message shape of both
 * transports ({@link Shape}), through the in-process proxy ({@code McpChaosProxy}) between a
 * scripted client and a scripted server. Each cell asserts what the client receives and when (the
 * bytes, the delay within bounds, the copies, the order, the end of the stream), what reached the
 * server, and what the rules said they did (the {@code FaultEvent}, the rule's counters, the
 * {@code mcp.chaos.faults.injected} meter); a fault the transport cannot take is refused when the
 * rule is loaded, with its message. A fault type without a row here fails the matrix: a fault
 * cannot be added without saying what a client gets.
 *
 * <p>A cell that fails until a fix is merged may carry a marker ({@link Expect#awaits}): it still
 * runs, is reported as aborted while it fails, and fails once it passes, so that the marker is
 * removed with the fix (none is marked now). The table in docs/rules.md ("What a client
 * experiences") is this matrix in prose.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FaultMatrixTest {


    private static final int CONCURRENT_CELLS = 6;
    private static final ExecutorService POOL = Executors.newFixedThreadPool(CONCURRENT_CELLS, r -> {
        Thread thread = new Thread(r, "fault-matrix");
        thread.setDaemon(true);
        return thread;
    });

    /** One way to configure a fault type, and its cell for every shape. */
    private record Variant(String params, Function<Shape, Expect> cells) {
    }

    private static final Map<String, List<Variant>> ROWS = new LinkedHashMap<>();

    private static void row(String type, String params, Function<Shape, Expect> cells) {
        ROWS.computeIfAbsent(type, t -> new ArrayList<>()).add(new Variant(params, cells));
    }

    @AfterAll
    static void stopPool() {
        POOL.shutdownNow();
    }

    /** Each shape's traffic with no fault: what the referee says of the scripted peers themselves. */
    private static final Map<Shape, Future<Outcome>> WITHOUT_FAULTS = new java.util.concurrent.ConcurrentHashMap<>();

    @TestFactory
    List<DynamicNode> everyFaultOnEveryShape() {
        for (Shape shape : Shape.values()) {
            WITHOUT_FAULTS.computeIfAbsent(shape, s -> POOL.submit(() -> Scenario.runClean(s)));
        }
        List<DynamicNode> rows = new ArrayList<>();
        Set<String> registered = new LinkedHashSet<>(FaultRegistry.types());
        for (String type : registered) {
            List<Variant> variants = ROWS.get(type);
            if (variants == null) {
                rows.add(DynamicTest.dynamicTest(type + ": no row", () -> fail("fault type '" + type
                        + "' is registered in FaultRegistry but the fault matrix has no row for it: add one to "
                        + "FaultMatrixTest saying what a client gets on each of the " + Shape.values().length
                        + " shapes " + List.of(Shape.values()))));
                continue;
            }
            List<DynamicNode> cells = new ArrayList<>();
            for (Variant variant : variants) {
                for (Shape shape : Shape.values()) {
                    Expect expect = variant.cells.apply(shape);
                    String name = type + (variant.params.isEmpty() ? "" : " {" + variant.params + "}") + " x "
                            + shape.label;
                    Future<Outcome> outcome = POOL.submit(() -> Scenario.run(shape, type, variant.params));
                    cells.add(DynamicTest.dynamicTest(name, () -> runCell(name, expect, outcome)));
                }
            }
            rows.add(DynamicContainer.dynamicContainer(type, cells));
        }
        for (String type : ROWS.keySet()) {
            if (!registered.contains(type)) {
                rows.add(DynamicTest.dynamicTest(type + ": not a fault", () -> fail("the fault matrix has a row for '"
                        + type + "', which FaultRegistry does not know (types: " + registered + ")")));
            }
        }
        return rows;
    }

    private static void runCell(String name, Expect expect, Future<Outcome> future) throws Exception {
        Outcome outcome = future.get(120, TimeUnit.SECONDS);
        try {
            expect.check(outcome);
        } catch (AssertionError e) {
            if (expect.awaits != null) {
                throw new TestAbortedException(expect.awaits + ": " + name + " fails as expected until the fix is "
                        + "merged:\n" + e.getMessage() + "\n\nobserved:\n" + outcome);
            }
            throw new AssertionError(name + ":\n" + e.getMessage() + "\n\nobserved:\n" + outcome, e);
        }
        if (expect.awaits != null) {
            fail(name + " passes now, but is marked '" + expect.awaits + "': remove the marker");
        }
        noPeerChargedForTheFault(name, outcome);
    }

    /**
     * The referee under the matrix (issue #33): whatever the fault did, the report charges the
     * peers with nothing the same scripted peers are not charged with when no fault acts (they
     * skip initialize, so lifecycle.before-initialize is theirs either way). What a fault did is
     * the fault's: an answer it made is the answer, a request it kept from the server is owed
     * nothing, a connection it ended takes what was owed. The twins, where a peer really misbehaves
     * under a fault and is caught, are RefereeUnderFaults*Test.
     */
    private static void noPeerChargedForTheFault(String name, Outcome outcome) throws Exception {
        if (outcome.verdict == null) {
            return; // the rule was refused: no traffic
        }
        Outcome clean = WITHOUT_FAULTS.get(outcome.shape).get(120, TimeUnit.SECONDS);
        Set<String> allowed = charges(clean.verdict);
        Set<String> charged = charges(outcome.verdict);
        charged.removeAll(allowed);
        if (!charged.isEmpty()) {
            fail(name + ": the referee charged a peer for what the fault did: " + charged + "\n"
                    + outcome.verdict.all() + "\nwith no fault: " + clean.verdict.all());
        }
    }

    /**
     * Which check each violation broke, and who broke it (c2s: the client, s2c: the server). The
     * client.* checks are left out: they judge how a client reacts to a fault, and the matrix's
     * scripted client does not react (it goes on after a 404, it never retries); their misbehaving
     * and well-behaved clients are in ClientChecksLiveTest.
     */
    private static Set<String> charges(dev.mcpchaos.server.check.Referee.Report report) {
        Set<String> charges = new LinkedHashSet<>();
        report.all().stream().filter(v -> !v.check().id().startsWith("client."))
                .forEach(v -> charges.add(v.check().id() + " " + v.dir()));
        return charges;
    }

    // ---- the rows ------------------------------------------------------------------------------------------

    private static final String HTTP_ONLY =
            "matrix.yaml: rule 'cell': %s: only applies to the http transport (this proxy runs the stdio transport)";
    private static final String STDIO_ONLY =
            "matrix.yaml: rule 'cell': %s: only applies to the stdio transport (this proxy runs the http transport)";

    private static Exp truncated(String message) {
        return Exp.is(Expected.truncated(message, 20));
    }

    private static Exp unclosed(String message) {
        return Exp.is(Expected.unclosed(message));
    }

    private static Exp padded(String message) {
        return Exp.padded(message, 4096);
    }

    private static Exp drift(String message) {
        return Exp.is(Expected.drift(message));
    }

    /** The proxy's own answer when it lost the upstream before answering: 502 and a JSON-RPC error with the id. */
    private static Expect.Answer badGateway(int id) {
        return status(502, "application/json", Exp.matching("a JSON-RPC error for id " + id,
                "\\{\"jsonrpc\":\"2\\.0\",\"id\":" + id + ",\"error\":\\{\"code\":-?\\d+,\"message\":\"[^\"]+\"}}"),
                Map.of());
    }

    private static Expect.Answer expired(int id) {
        return status(404, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32000,"
                + "\"message\":\"mcp-chaos: session s-1 expired (injected)\"}}", Map.of());
    }

    static {
        row("latency", "latency: 200ms", s -> {
            Expect e = Expect.of(s).injects("latency", "held 200ms");
            return switch (s) {
                // Held, then on; the messages behind it in its direction wait (order is kept).
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION ->
                        e.lineAt(0, 200).lineAt(1, 200);
                case STDIO_SERVER_REQUEST -> e.lineAt(0, 200).lineAt(1, 200).lineAt(2, 200);
                // Across exchanges the witness waits in the chain, then races the target to the
                // upstream on its own connection: only "not before the target's release" holds.
                case HTTP_POST_REQUEST -> e.upstreamAnyOrder(T_CALL, W_CALL, PING).upstreamAt(T_CALL, 200)
                        .upstreamAt(W_CALL, 200);
                case HTTP_JSON_ANSWER -> e.deliveredAfter("T_RESULT", T_RESULT, 200)
                        .answeredNotBefore("witness", "T_RESULT", 200);
                case HTTP_SSE_FINAL -> e.deliveredAfter("T_RESULT", T_RESULT, 200)
                        .answeredNotBefore("witness", "T_RESULT", 200);
                case HTTP_SSE_MID -> e.deliveredAfter("PROGRESS", PROGRESS, 200)
                        .deliveredAfter("T_RESULT", T_RESULT, 200);
                case HTTP_GET_EVENT -> e.deliveredAfter("NOTE_T", NOTE_T, 200).deliveredAfter("NOTE_W", NOTE_W, 200);
                // Each sessionless POST is a session of its own: the next one does not wait.
                case HTTP_SESSIONLESS_POST -> e.upstream(W_CALL, T_CALL, PING).upstreamAt(T_CALL, 200)
                        .answeredAfter("target", "witness");
            };
        });

        row("drop", "", s -> {
            Expect e = Expect.of(s).injects("drop", "dropped");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.lines(W_RESULT).server(W_CALL);
                case STDIO_SERVER_RESPONSE -> e.lines(W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(T_RESULT);
                // The scripted server's shell writes the request and the notification after it in
                // two writes (bash flushes stdout per line), so the kill may come between them.
                case STDIO_SERVER_REQUEST -> e.linesOneOf(List.of(), List.of(NOTE_AFTER)).server(ASK);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", hanging()).upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", hanging());
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-2", NOTE_W)));
            };
        });

        row("duplicate", "copies: 1", s -> {
            Expect e = Expect.of(s).injects("duplicate", "sent 2 times");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(T_CALL, T_CALL, W_CALL).lines(T_RESULT, T_RESULT, W_RESULT);
                case STDIO_SERVER_RESPONSE -> e.lines(T_RESULT, T_RESULT, W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(PROGRESS, PROGRESS, T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(ROOTS, ROOTS, NOTE_AFTER, ASK_ANSWERED)
                        .server(ASK, ROOTS_ANSWER, ROOTS_ANSWER);
                // The copy goes upstream on a connection of its own; its answer is discarded.
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstreamAnyOrder(T_CALL, T_CALL, W_CALL, PING);
                // A JSON body holds one message: the client can get one copy, so the account must
                // not claim two (before #14's fix: "sent 2 times", counted).
                case HTTP_JSON_ANSWER -> Expect.of(s).noOp("duplicate", "sent 2 times");
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", T_RESULT),
                        ev("t-1", T_RESULT)));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", PROGRESS), ev("t-1", PROGRESS),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-1", NOTE_T), ev("g-1", NOTE_T),
                        ev("g-2", NOTE_W)));
            };
        });

        // One matched message: its window never fills and is released after hold; later messages overtake it.
        row("reorder", "window: 2, hold: 250ms", s -> {
            Expect e = Expect.of(s).injects("reorder", "held.*");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(W_CALL, T_CALL).lines(W_RESULT, T_RESULT).lineAt(1, 250);
                case STDIO_SERVER_RESPONSE -> e.lines(W_RESULT, T_RESULT).lineAt(1, 250);
                case STDIO_SERVER_NOTIFICATION -> e.lines(T_RESULT, PROGRESS).lineAt(1, 250);
                case STDIO_SERVER_REQUEST -> e.lines(NOTE_AFTER, ROOTS, ASK_ANSWERED).lineAt(1, 250);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(W_CALL, T_CALL, PING)
                        .upstreamAt(T_CALL, 250)
                        .answeredAfter("target", "witness");
                case HTTP_JSON_ANSWER -> e.deliveredAfter("T_RESULT", T_RESULT, 250).answeredAfter("target", "witness");
                case HTTP_SSE_FINAL -> e.deliveredAfter("T_RESULT", T_RESULT, 250);
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-2", T_RESULT), ev("t-1", PROGRESS)))
                        .deliveredAfter("PROGRESS", PROGRESS, 250);
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-2", NOTE_W), ev("g-1", NOTE_T)))
                        .deliveredAfter("NOTE_T", NOTE_T, 250);
            };
        });

        row("truncate", "at: 20B", s -> {
            Expect e = Expect.of(s).injects("truncate", "cut at 20 of \\d+ B");
            return switch (s) {
                // The scripted stdio server, like a real one, answers a line it cannot parse with a parse error.
                case STDIO_CLIENT_REQUEST -> e.server(truncated(T_CALL), W_CALL).lines(PARSE_ERROR, W_RESULT);
                case STDIO_SERVER_RESPONSE -> e.lines(truncated(T_RESULT), W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(truncated(PROGRESS), T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(truncated(ROOTS), NOTE_AFTER).server(ASK);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(truncated(T_CALL), W_CALL, PING)
                        .answer("target", status(400, "application/json", PARSE_ERROR, Map.of()));
                case HTTP_JSON_ANSWER -> e.answer("target", json(truncated(T_RESULT)));
                // A replaced event keeps its id, so that the client's Last-Event-ID stays right.
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", truncated(T_RESULT))));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", truncated(PROGRESS)),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-1", truncated(NOTE_T)),
                        ev("g-2", NOTE_W)));
            };
        });

        row("corrupt", "mode: unclosed_bracket", s -> {
            Expect e = Expect.of(s).injects("corrupt", "unclosed_bracket \\(\\d+ B -> \\d+ B\\)");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(unclosed(T_CALL), W_CALL).lines(PARSE_ERROR, W_RESULT);
                case STDIO_SERVER_RESPONSE -> e.lines(unclosed(T_RESULT), W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(unclosed(PROGRESS), T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(unclosed(ROOTS), NOTE_AFTER).server(ASK);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(unclosed(T_CALL), W_CALL, PING)
                        .answer("target", status(400, "application/json", PARSE_ERROR, Map.of()));
                case HTTP_JSON_ANSWER -> e.answer("target", json(unclosed(T_RESULT)));
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", unclosed(T_RESULT))));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", unclosed(PROGRESS)),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-1", unclosed(NOTE_T)),
                        ev("g-2", NOTE_W)));
            };
        });

        row("oversize", "size: 4KiB", s -> {
            Expect e = Expect.of(s).injects("oversize", "grown from \\d+ B to 4096 B");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(padded(T_CALL), W_CALL);
                case STDIO_SERVER_RESPONSE -> e.lines(padded(T_RESULT), W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(padded(PROGRESS), T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(padded(ROOTS), NOTE_AFTER, ASK_ANSWERED);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(padded(T_CALL), W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", json(padded(T_RESULT)));
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", padded(T_RESULT))));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", padded(PROGRESS)),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-1", padded(NOTE_T)),
                        ev("g-2", NOTE_W)));
            };
        });

        row("error", "code: -32001, message: injected", s -> {
            Expect request = Expect.of(s).injects("error", "answered with error -32001; not forwarded");
            Expect response = Expect.of(s).injects("error", "response replaced by error -32001");
            String error = Expected.error("1");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> request.lines(error, W_RESULT).server(W_CALL);
                case STDIO_SERVER_RESPONSE -> response.lines(error, W_RESULT);
                // Answered back to the server, which asked; the client never sees the request.
                case STDIO_SERVER_REQUEST -> request.lines(NOTE_AFTER, ASK_ERRORED)
                        .server(ASK, Expected.error("\"s1\""));
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> request.answer("target", json(error))
                        .upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> response.answer("target", json(error));
                case HTTP_SSE_FINAL -> response.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", error)));
                // A notification has nothing to answer: the rule does not pick it.
                case STDIO_SERVER_NOTIFICATION, HTTP_SSE_MID, HTTP_GET_EVENT -> Expect.of(s);
            };
        });

        row("tool_error", "text: injected tool failure", s -> {
            Expect request = Expect.of(s).injects("tool_error", "answered with an error result; not forwarded");
            Expect response = Expect.of(s).injects("tool_error", "result replaced by an error result");
            String toolError = Expected.toolError("1");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> request.lines(toolError, W_RESULT).server(W_CALL);
                case STDIO_SERVER_RESPONSE -> response.lines(toolError, W_RESULT);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> request.answer("target", json(toolError))
                        .upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> response.answer("target", json(toolError));
                case HTTP_SSE_FINAL -> response.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", toolError)));
                // Only a tools/call and its answer: not picked.
                case STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST, HTTP_SSE_MID, HTTP_GET_EVENT -> Expect.of(s);
            };
        });

        row("http_status", "status: 503, headers: {Retry-After: '1'}, body: busy", s -> {
            Expect e = Expect.of(s).injects("http_status", "answered HTTP 503");
            Expect.Answer busy = status(503, Expect.NOT_JSON, "busy", Map.of("Retry-After", "1"));
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "http_status"));
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", busy).upstream(W_CALL, PING);
                // Instead of the upstream's answer.
                case HTTP_JSON_ANSWER -> e.answer("target", busy);
                // The answer's head has left: no status can be given any more, so the event must
                // pass (before #14's fix it was dropped, and counted as "answered HTTP 503").
                case HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_GET_EVENT -> Expect.of(s).noOp("http_status", "answered HTTP");
            };
        });

        row("invalid_content_type", "content_type: text/html", s -> {
            Expect e = Expect.of(s).injects("invalid_content_type", "content type claimed: text/html");
            Expect.Answer html = status(200, "text/html", T_RESULT, Map.of());
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "invalid_content_type"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SESSIONLESS_POST -> e.answer("target", html);
                // The stream's head has left: nothing to claim; passes, not counted.
                case HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_GET_EVENT ->
                        Expect.of(s).noOp("invalid_content_type", "content type claimed");
            };
        });

        row("disconnect", "side: server", s -> {
            Expect e = Expect.of(s).injects("disconnect", "closed the server's side");
            return switch (s) {
                // The server's stdin closes at the message: it reads no more, answers what it had, exits.
                case STDIO_CLIENT_REQUEST -> e.lines().server();
                case STDIO_SERVER_RESPONSE -> e.lines(W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(T_RESULT);
                // The scripted server's shell writes the request and the notification after it in
                // two writes (bash flushes stdout per line), so the kill may come between them.
                case STDIO_SERVER_REQUEST -> e.linesOneOf(List.of(), List.of(NOTE_AFTER)).server(ASK);
                // The upstream connection is gone before an answer: the proxy says so, as for an
                // upstream that closed (before #14's fix the client was left waiting for ever).
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", badGateway(1))
                        .upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", badGateway(1));
                // Mid-stream: the stream ends abruptly after what came before, as an upstream
                // that closes mid-stream ends it (before #14's fix it ended cleanly, as if complete).
                case HTTP_SSE_FINAL, HTTP_SSE_MID -> e.answer("target", sse(CUT, PRIMING_T));
                case HTTP_GET_EVENT -> e.answer("get", sse(CUT, PRIMING_G));
            };
        });

        row("disconnect", "side: client", s -> {
            Expect e = Expect.of(s).injects("disconnect", "closed the client's side");
            return switch (s) {
                // The proxy's stdout closes: the client reads end of file; its own input still flows.
                case STDIO_CLIENT_REQUEST -> e.lines().server(W_CALL);
                case STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION -> e.lines();
                case STDIO_SERVER_REQUEST -> e.lines().server(ASK);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", closedNoBytes())
                        .upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", closedNoBytes());
                // What came before the cut arrives, then the stream ends abruptly (before #14's
                // fix the priming event sent before the cut was lost with the connection).
                case HTTP_SSE_FINAL, HTTP_SSE_MID -> e.answer("target", sse(CUT, PRIMING_T));
                case HTTP_GET_EVENT -> e.answer("get", sse(CUT, PRIMING_G));
            };
        });

        row("blackhole", "", s -> {
            Expect e = Expect.of(s).injects("blackhole", "swallowed; the connection stays open");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.lines(W_RESULT).server(W_CALL);
                case STDIO_SERVER_RESPONSE -> e.lines(W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(T_RESULT);
                // The scripted server's shell writes the request and the notification after it in
                // two writes (bash flushes stdout per line), so the kill may come between them.
                case STDIO_SERVER_REQUEST -> e.linesOneOf(List.of(), List.of(NOTE_AFTER)).server(ASK);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", hanging()).upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", hanging());
                // The answer is swallowed and the exchange left hanging, so the client waits for
                // its own timeout (before #14's fix the stream ended at once, as for drop).
                case HTTP_SSE_FINAL -> e.answer("target", sse(OPEN, PRIMING_T));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-2", NOTE_W)));
            };
        });

        row("throttle", "chunk: 32B, interval: 60ms", s -> {
            // Stdio: pieces of 32 B every 60 ms, the newline in the last (the line completes not before
            // (pieces - 1) x 60 ms, its first bytes at least one interval earlier, less 40 ms of delivery
            // lag: a loaded 2-core machine delivered the first piece 29 ms late once); HTTP: held as long,
            // then whole.
            String pieces = "written in %d pieces of up to 32 B, one every 60ms";
            String held = "held %dms \\(%d B at the throttled rate\\)";
            Expect e = Expect.of(s);
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.injects("throttle", String.format(pieces, 3)).lineAt(0, 120)
                        .lineAt(1, 120);
                case STDIO_SERVER_RESPONSE -> e.injects("throttle", String.format(pieces, 3)).lineAt(0, 120)
                        .linePieces(0, 80).lineAt(1, 120);
                case STDIO_SERVER_NOTIFICATION -> e.injects("throttle", String.format(pieces, 4)).lineAt(0, 180)
                        .linePieces(0, 140).lineAt(1, 180);
                case STDIO_SERVER_REQUEST -> e.injects("throttle", String.format(pieces, 2)).lineAt(0, 60)
                        .linePieces(0, 20).lineAt(1, 60);
                case HTTP_POST_REQUEST -> e.injects("throttle", String.format(held, 120, 93))
                        .upstreamAnyOrder(T_CALL, W_CALL, PING).upstreamAt(T_CALL, 120).upstreamAt(W_CALL, 120);
                // Not held behind the target either, but 120 ms is too short to show the witness
                // overtaking it on a busy machine: latency's and reorder's cells show that.
                case HTTP_SESSIONLESS_POST -> e.injects("throttle", String.format(held, 120, 93))
                        .upstreamAnyOrder(T_CALL, W_CALL, PING).upstreamAt(T_CALL, 120);
                case HTTP_JSON_ANSWER -> e.injects("throttle", String.format(held, 120, 84))
                        .deliveredAfter("T_RESULT", T_RESULT, 120).answeredNotBefore("witness", "T_RESULT", 120);
                case HTTP_SSE_FINAL -> e.injects("throttle", String.format(held, 120, 84))
                        .deliveredAfter("T_RESULT", T_RESULT, 120).answeredNotBefore("witness", "T_RESULT", 120);
                case HTTP_SSE_MID -> e.injects("throttle", String.format(held, 180, 103))
                        .deliveredAfter("PROGRESS", PROGRESS, 180).deliveredAfter("T_RESULT", T_RESULT, 180);
                case HTTP_GET_EVENT -> e.injects("throttle", String.format(held, 120, 92))
                        .deliveredAfter("NOTE_T", NOTE_T, 120).deliveredAfter("NOTE_W", NOTE_W, 120);
            };
        });

        row("noise", "text: stray log line", s -> {
            Expect e = Expect.of(s).injects("noise", "wrote a stray line of 14 B before the message");
            String stray = "stray log line";
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(stray, T_CALL, W_CALL).lines(PARSE_ERROR, T_RESULT, W_RESULT);
                case STDIO_SERVER_RESPONSE -> e.lines(stray, T_RESULT, W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(stray, PROGRESS, T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(stray, ROOTS, NOTE_AFTER, ASK_ANSWERED);
                // The text leads the POST's body, as it leads a JSON answer's (before #14's fix it
                // went upstream as a POST of its own, the request as a discarded duplicate).
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(stray + "\n" + T_CALL, W_CALL, PING)
                        .answer("target", status(400, "application/json", PARSE_ERROR, Map.of()));
                case HTTP_JSON_ANSWER -> e.answer("target", json(stray + "\n" + T_RESULT));
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev(null, stray), ev("t-1", T_RESULT)));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev(null, stray), ev("t-1", PROGRESS),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev(null, stray), ev("g-1", NOTE_T),
                        ev("g-2", NOTE_W)));
            };
        });

        row("mutate", "patch: [{op: add, path: /drift, value: true}]", s -> {
            Expect e = Expect.of(s).injects("mutate", "patched \\(1 operation\\)");
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> e.server(drift(T_CALL), W_CALL);
                case STDIO_SERVER_RESPONSE -> e.lines(drift(T_RESULT), W_RESULT);
                case STDIO_SERVER_NOTIFICATION -> e.lines(drift(PROGRESS), T_RESULT);
                case STDIO_SERVER_REQUEST -> e.lines(drift(ROOTS), NOTE_AFTER, ASK_ANSWERED);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.upstream(drift(T_CALL), W_CALL, PING);
                case HTTP_JSON_ANSWER -> e.answer("target", json(drift(T_RESULT)));
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", drift(T_RESULT))));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", drift(PROGRESS)),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, ev("g-1", drift(NOTE_T)),
                        ev("g-2", NOTE_W)));
            };
        });

        row("id_mismatch", "", s -> {
            Expect e = Expect.of(s).injects("id_mismatch", "id 1 -> 1000001");
            String mismatched = Expected.mismatched(T_RESULT, 1);
            return switch (s) {
                case STDIO_SERVER_RESPONSE -> e.lines(mismatched, W_RESULT);
                case HTTP_JSON_ANSWER -> e.answer("target", json(mismatched));
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", mismatched)));
                // Only a response has an id to change: not picked.
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST, HTTP_POST_REQUEST,
                     HTTP_SSE_MID, HTTP_GET_EVENT, HTTP_SESSIONLESS_POST -> Expect.of(s);
            };
        });

        row("session_expire", "", s -> {
            Expect e = Expect.of(s).answer("witness", expired(2)).answer("ping", expired(9));
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "session_expire"));
                // This request too is answered 404 with a JSON-RPC error, as every later one is.
                case HTTP_POST_REQUEST -> e.injects("session_expire", "session expired; this request answered 404")
                        .answer("target", expired(1)).upstream();
                case HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID -> e.injects("session_expire", "session expired")
                        .upstream(T_CALL);
                case HTTP_GET_EVENT -> Expect.of(s).injects("session_expire", "session expired")
                        .answer("ping", expired(9))
                        .upstream();
                // No session to expire: a 404 would tell a sessionless client of a session it never
                // had; the message passes (before #14's fix: 404, counted).
                case HTTP_SESSIONLESS_POST -> Expect.of(s).noOp("session_expire", "session expired");
            };
        });

        // The SSE faults (#37). A JSON body, the client's messages and a POST's answer give them
        // nothing to act on: the message passes as without the rule, and nothing is counted.
        row("sse_retry", "retry: 3s", s -> {
            Expect e = Expect.of(s).injects("sse_retry", "retry: 3000");
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "sse_retry"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SESSIONLESS_POST -> Expect.of(s).noOp("sse_retry", "retry");
                // The event keeps its id and message and gains the field, before the others.
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, PRIMING_T, evRetry("t-1", T_RESULT, 3000)));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, PRIMING_T, evRetry("t-1", PROGRESS, 3000),
                        ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, PRIMING_G, evRetry("g-1", NOTE_T, 3000),
                        ev("g-2", NOTE_W)));
            };
        });

        // The matrix opens the GET stream of these two with Last-Event-ID: g-0 (a resumed stream).
        row("resume_gap", "", s -> {
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "resume_gap"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_SESSIONLESS_POST ->
                        Expect.of(s).noOp("resume_gap", "skipped");
                case HTTP_GET_EVENT -> Expect.of(s).injects("resume_gap", "skipped on the stream resumed after event g-0")
                        .answer("get", sse(CLEAN, PRIMING_G, ev("g-2", NOTE_W)));
            };
        });

        row("resume_repeat", "", s -> {
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "resume_repeat"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_SESSIONLESS_POST ->
                        Expect.of(s).noOp("resume_repeat", "repeated");
                case HTTP_GET_EVENT -> Expect.of(s)
                        .injects("resume_repeat", "repeated on the stream resumed after event g-0")
                        .answer("get", sse(CLEAN, PRIMING_G, ev("g-1", NOTE_T), ev("g-1", NOTE_T), ev("g-2", NOTE_W)));
            };
        });

        row("get_stream_drop", "", s -> {
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "get_stream_drop"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_SESSIONLESS_POST ->
                        Expect.of(s).noOp("get_stream_drop", "dropped");
                // As disconnect: client on the GET stream: what came before, then the cut.
                case HTTP_GET_EVENT -> Expect.of(s).injects("get_stream_drop", "dropped the GET stream")
                        .answer("get", sse(CUT, PRIMING_G));
            };
        });

        // The priming event (an id, empty data) before a stream's first message is removed; the
        // message keeps its id. Only a stream's first message had one before it.
        row("priming_drop", "", s -> {
            Expect e = Expect.of(s).injects("priming_drop", "removed the priming event before it \\(id [tg]-0\\)");
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "priming_drop"));
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SESSIONLESS_POST -> Expect.of(s).noOp("priming_drop", "removed");
                case HTTP_SSE_FINAL -> e.answer("target", sse(CLEAN, ev("t-1", T_RESULT)));
                case HTTP_SSE_MID -> e.answer("target", sse(CLEAN, ev("t-1", PROGRESS), ev("t-2", T_RESULT)));
                case HTTP_GET_EVENT -> e.answer("get", sse(CLEAN, ev("g-1", NOTE_T), ev("g-2", NOTE_W)));
            };
        });

        row("crash", "", s -> {
            Expect e = Expect.of(s).injects("crash", "sent SIGKILL to the server").exit(137);
            return switch (s) {
                // Killed at the message; what the server wrote before it was killed still reaches the
                // client (and its stderr the proxy's). Whether the server got to answer the witness
                // before the kill is a race: either way is right, a lost line that was written is not.
                case STDIO_CLIENT_REQUEST -> e.lines().server();
                case STDIO_SERVER_RESPONSE -> e.linesOneOf(List.of(), List.of(W_RESULT))
                        .serverOneOf(List.of(T_CALL), List.of(T_CALL, W_CALL));
                case STDIO_SERVER_NOTIFICATION -> e.lines(T_RESULT);
                // The scripted server's shell writes the request and the notification after it in
                // two writes (bash flushes stdout per line), so the kill may come between them.
                case STDIO_SERVER_REQUEST -> e.linesOneOf(List.of(), List.of(NOTE_AFTER)).server(ASK);
                case HTTP_POST_REQUEST, HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_GET_EVENT,
                     HTTP_SESSIONLESS_POST -> Expect.refused(s, String.format(STDIO_ONLY, "crash"));
            };
        });

        row("input_required", "request_state: round-2", s -> {
            Expect request = Expect.of(s).injects("input_required",
                    "answered with an input_required round \\(requestState round-2\\); not forwarded");
            Expect response = Expect.of(s).injects("input_required",
                    "result replaced by an input_required round \\(requestState round-2\\)");
            String round = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\","
                    + "\"requestState\":\"round-2\"}}";
            return switch (s) {
                case STDIO_CLIENT_REQUEST -> request.lines(round, W_RESULT).server(W_CALL);
                case STDIO_SERVER_RESPONSE -> response.lines(round, W_RESULT);
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> request.answer("target", json(round))
                        .upstream(W_CALL, PING);
                case HTTP_JSON_ANSWER -> response.answer("target", json(round));
                case HTTP_SSE_FINAL -> response.answer("target", sse(CLEAN, PRIMING_T, ev("t-1", round)));
                // Only a tools/call (prompts/get, resources/read) and its answer: not picked.
                case STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST, HTTP_SSE_MID, HTTP_GET_EVENT -> Expect.of(s);
            };
        });

        row("header_mismatch", "header: Mcp-Name", s -> {
            Expect e = Expect.of(s).injects("header_mismatch", "answered HTTP 400 with -32020 \\(Mcp-Name\\)");
            Expect.Answer refused = status(400, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
                    + "{\"code\":-32020,\"message\":\"Header mismatch: the Mcp-Name header does not match the "
                    + "request body (injected by mcp-chaos)\"}}", Map.of());
            return switch (s) {
                case STDIO_CLIENT_REQUEST, STDIO_SERVER_RESPONSE, STDIO_SERVER_NOTIFICATION, STDIO_SERVER_REQUEST ->
                        Expect.refused(s, String.format(HTTP_ONLY, "header_mismatch"));
                case HTTP_POST_REQUEST, HTTP_SESSIONLESS_POST -> e.answer("target", refused).upstream(W_CALL, PING);
                // Only requests: an answer or an event is not picked.
                case HTTP_JSON_ANSWER, HTTP_SSE_FINAL, HTTP_SSE_MID, HTTP_GET_EVENT -> Expect.of(s);
            };
        });
    }
}
