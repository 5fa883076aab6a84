package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleDraft;
import dev.mcpchaos.rules.Rules;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The drill's scenarios, in the order of docs/drill.md: first those of both eras, then the
 * 2025 era's (sessions), then the 2026-07-28 era's (stateless). Scenarios this version cannot run
 * are listed too, {@link Scenario#notBuilt() with the reason}, never as runnable.
 *
 * <p>What the client under drill is expected to do (the demo server is the upstream): initialize,
 * {@code tools/list}, then {@code tools/call}s (answered as an SSE stream when it asks for
 * progress, as the demo's {@code slow} does, else as JSON), each bounded by its own timeout.
 * The faults hit the first {@code tools/list} answer or the first {@code tools/call}.
 */
public final class Catalogue {

    private static final Set<TransportKind> BOTH = Set.of(TransportKind.HTTP, TransportKind.STDIO);
    private static final Set<TransportKind> HTTP = Set.of(TransportKind.HTTP);
    private static final Set<TransportKind> STDIO = Set.of(TransportKind.STDIO);
    private static final Set<Era> ALL_ERAS = Set.of(Era.SESSIONS, Era.STATELESS);
    private static final Set<Era> SESSIONS = Set.of(Era.SESSIONS);
    private static final Set<Era> STATELESS = Set.of(Era.STATELESS);

    private static final String GOES_ON = "pass when, after the faulted message, a request of the client was "
            + "answered (the session went on)";
    private static final String BROKEN = "basic#messages (messages MUST be JSON-RPC 2.0: this one is not; what a "
            + "receiver does with it the spec leaves open)";

    /** How late the answer of {@code late-answer} comes. */
    private static final Duration LATE = Duration.ofSeconds(3);

    /**
     * How long close-as-cancel holds the answer: longer than the test client's 4 s for a write and
     * the real clients' drivers' 2.5 s, so that a client with a timeout of its own gives up first.
     */
    private static final Duration CANCEL_HOLD = Duration.ofSeconds(5);

    private static final List<Scenario> ALL = build();

    private Catalogue() {
    }

    /** Every scenario, built or not, in the order of docs/drill.md. */
    public static List<Scenario> all() {
        return ALL;
    }

    /** The scenario of this name, if the catalogue has one. */
    public static Optional<Scenario> find(String name) {
        return ALL.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /**
     * What of {@code scenario} this version cannot run, for the "not built yet" column: the
     * whole scenario with its reason; empty when it is built (the runner drives both transports
     * in both eras).
     */
    public static String notBuiltYet(Scenario scenario) {
        return scenario.built() ? "" : scenario.notBuilt();
    }

    /** The catalogue as the Markdown table of docs/drill.md. */
    public static String markdownTable() {
        StringBuilder sb = new StringBuilder();
        sb.append("| scenario | fault | a resilient client | source | level | transports | eras | graded by | not built yet |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Scenario s : ALL) {
            sb.append("| `").append(s.name()).append("` | ").append(s.fault()).append(" | ").append(s.resilient())
                    .append(" | ").append(s.source()).append(" | ").append(s.level()).append(" | ")
                    .append(transports(s)).append(" | ").append(eras(s)).append(" | ").append(s.grading())
                    .append(" | ").append(notBuiltYet(s).isEmpty() ? "-" : notBuiltYet(s)).append(" |\n");
        }
        return sb.toString();
    }

    /** The transports of {@code s}, as the docs name them: {@code http, stdio}. */
    public static String transports(Scenario s) {
        return s.transports().stream().map(t -> t.name().toLowerCase(java.util.Locale.ROOT)).sorted()
                .reduce((a, b) -> a + ", " + b).orElse("");
    }

    /** The eras of {@code s}: {@code 2025, 2026}. */
    static String eras(Scenario s) {
        return s.eras().stream().map(Era::label).sorted().reduce((a, b) -> a + ", " + b).orElse("");
    }

    private static List<Scenario> build() {
        List<Scenario> s = new ArrayList<>();
        // Both eras.
        s.add(built("answer-lost", "the answer to tools/list never comes",
                List.of(Rules.drop("answer-lost").onMethod("tools/list").onResponses().times(1)),
                "gives up in its own time (and cancels), then goes on with the session",
                "basic/lifecycle#timeouts", Level.SHOULD, GOES_ON + "; a client that waits for ever never "
                        + "sends another request and fails", Graders.goesOn(false)));
        s.add(built("late-answer", "the answer to tools/list comes 3 s late, after a short client timeout",
                List.of(Rules.latency("late-answer", LATE).onMethod("tools/list").onResponses()
                        .times(1)),
                "ignores the answer to a request it gave up on, without crashing, and goes on",
                "basic/utilities/cancellation#timing-considerations (MUST: both parties handle the race gracefully; "
                        + "the sender SHOULD ignore a response after its cancellation)", Level.MUST,
                GOES_ON + ", and the client exited 0; not exercised when the client waited the 3 s out (no "
                        + "cancellation, no other request, no exit before the answer left): its own timeout is longer, "
                        + "so the answer was not late for it", Graders.ignoresLateAnswer(LATE)));
        s.add(built("duplicate-answer", "the answer to a tools/call comes twice (an SSE answer; a JSON one cannot "
                        + "carry two)",
                List.of(Rules.duplicate("duplicate-answer").onMethod("tools/call").onResponses().times(1)),
                "takes the first answer, ignores the copy, goes on", "basic#responses (one response per request, "
                        + "bound by its id; no rule for a copy: the catalogue's recommendation)", Level.SHOULD, GOES_ON,
                Graders.goesOn(false)));
        // stdio only: on HTTP each answer has its own exchange, so no order can be swapped on one stream.
        s.add(new Scenario("out-of-order", "two tools/calls of add in flight reach the server swapped, so their "
                        + "answers come in the other order",
                List.of(Rules.reorder("out-of-order", 2).onMethod("tools/call").onTool("add").onRequests()),
                "binds each answer to its request by id", "basic#responses (a response MUST carry its request's id); "
                        + "JSON-RPC 2.0 section 6 (the client SHOULD match responses by id)", Level.SHOULD, STDIO,
                ALL_ERAS,
                GOES_ON + ", and the client exited 0 (the client checks each answer against its own request: "
                        + "the journal cannot see which answer it took for which)", Graders.goesOn(true), null));
        s.add(built("malformed-event", "the answer to a tools/call is not valid JSON (unclosed bracket)",
                List.of(Rules.corrupt("malformed-event", "unclosed_bracket").onMethod("tools/call").onResponses()
                        .times(1)),
                "survives the broken message, reports it, goes on", BROKEN, Level.SHOULD, GOES_ON,
                Graders.goesOn(false)));
        s.add(built("truncated-answer", "the answer to a tools/call is cut in half",
                List.of(Rules.truncate("truncated-answer").onMethod("tools/call").onResponses().times(1)),
                "survives the broken message, reports it, goes on", BROKEN, Level.SHOULD, GOES_ON,
                Graders.goesOn(false)));
        s.add(built("oversized-answer", "the answer to a tools/call is padded to 2 MiB",
                List.of(Rules.oversize("oversized-answer", "2MiB").onMethod("tools/call").onResponses().times(1)),
                "reads it or refuses it by its own limit, without falling over; goes on", "basic#messages (no size "
                        + "limit in the spec: the catalogue's recommendation)",
                Level.SHOULD, GOES_ON, Graders.goesOn(false)));
        s.add(built("slow-drip", "the answer to a tools/call arrives 16 bytes every 100 ms",
                List.of(Rules.throttle("slow-drip", 16, Duration.ofMillis(100)).onMethod("tools/call")
                        .onResponses().times(1)),
                "reads it whole or gives up in its own time; goes on", "basic/lifecycle#timeouts", Level.SHOULD,
                GOES_ON, Graders.goesOn(false)));
        s.add(built("error-vs-iserror", "the first tools/call is answered with a JSON-RPC error, the second with "
                        + "an isError result",
                List.of(Rules.error("error-vs-iserror", -32603, "Internal error (injected by mcp-chaos)")
                                .onMethod("tools/call").onRequests().times(1),
                        Rules.toolError("error-vs-iserror-tool").onMethod("tools/call").onRequests().after(1)
                                .times(1)),
                "tells a protocol error from a tool's own failure, and goes on", "server/tools#error-handling",
                Level.SHOULD, GOES_ON, Graders.goesOn(false)));
        s.add(new Scenario("retry-after-503", "the first tools/call is answered 503 with Retry-After: 2",
                List.of(Rules.httpStatus("retry-after-503", 503).header("Retry-After", "2").onMethod("tools/call")
                        .onRequests().times(1)),
                "waits at least as long as Retry-After says before trying again (or does not retry)",
                "RFC 9110 section 10.2.3 (Retry-After: how long the client ought to wait; MCP says nothing of 503)",
                Level.SHOULD,
                HTTP, ALL_ERAS,
                "ClientVerification.honoredRetryAfter: the next tools/call came no sooner than Retry-After",
                Graders.honorsRetryAfter(), null));
        // HTTP only: on stdio the one connection is the whole session (server-crash is stdio's).
        s.add(new Scenario("stream-closed", "the connection carrying the answer to a tools/call closes before it",
                List.of(Rules.disconnect("stream-closed", "client").onMethod("tools/call").onResponses().times(1)),
                "reports the call failed (or resumes it), and goes on", "basic/transports#sending-messages-to-the-server "
                        + "(disconnection MAY occur at any time; the client SHOULD reconnect to poll a resumable stream)",
                Level.SHOULD, HTTP, ALL_ERAS, GOES_ON, Graders.goesOn(false), null));
        s.add(new Scenario("server-crash", "the server process is killed (SIGKILL) at the first tools/call",
                List.of(Rules.crash("server-crash", "KILL").onMethod("tools/call").onRequests().times(1)),
                "reports it; reconnects or stops cleanly", "basic/lifecycle#shutdown (stdio: the server MAY end the "
                + "connection by exiting)", Level.SHOULD, STDIO, ALL_ERAS,
                "pass when the client ended on its own after the crash (any exit code); fail when it had to be "
                        + "stopped at the timeout", Graders.endsAfterServerCrash(), null));
        // blackhole, not drop: a dropped final SSE event ends the stream, which a client may resume
        // and get the answer after all; a blackholed one keeps the stream open without it.
        s.add(built("write-answer-dropped", "the answer to the first tools/call never comes, after the server did it",
                List.of(Rules.blackhole("write-answer-dropped").onMethod("tools/call").onResponses().times(1)),
                "does not send the call again blindly: reads back or reports the outcome unknown",
                "schema#toolannotations (idempotentHint: repeated calls have no additional effect); no rule in the "
                        + "spec text: the catalogue's recommendation", Level.SHOULD,
                "ClientVerification.notRetriedAfter the lost answer, and duplicateWrites(toolCall(\"*\")).never()",
                Graders.noResendAfterLostAnswer()));
        s.add(built("request-dropped", "the first tools/list request never reaches the server",
                List.of(Rules.drop("request-dropped").onMethod("tools/list").onRequests().times(1)),
                "times out and sends the read again, under a new id (a read is safe to resend; a client cannot "
                        + "tell a lost request from a lost answer, so it resends reads, never writes)",
                "basic/lifecycle#timeouts (SHOULD time out; resending is the catalogue's recommendation, a MAY for the "
                        + "spec); basic#requests (MUST NOT reuse an id)", Level.SHOULD,
                "ClientVerification.retriedAfter the dropped request (SHOULD); a resend under the same id fails at "
                        + "MUST (basic#requests)",
                Graders.resendsDroppedRequest()));
        // 2025 era: sessions.
        s.add(new Scenario("session-404", "a tools/call is answered 404: the session is gone",
                List.of(Rules.sessionExpire("session-404").onMethod("tools/call").onRequests().times(1)),
                "starts a new session with initialize", "basic/transports#session-management", Level.MUST, HTTP,
                SESSIONS, "ClientVerification.reinitializedAfter(\"session-404\")", Graders.reinitializes(), null));
        // 2025 era: the SSE stream's resumption (#37), in a class of their own.
        s.addAll(SseScenarios.all());
        // 2026-07-28 era: stateless. The demo server serves that revision beside the 2025 ones (a
        // dual-era server); sources are the 2026-07-28 pages (basic/transports/streamable-http,
        // basic/versioning, basic/patterns/mrtr).
        // The 2026-07-28 changelog, not the transport page, holds the client's MUST; the page says
        // only "Resumable SSE streams via Last-Event-ID are not supported".
        s.add(new Scenario("stream-broken-reissue", "the connection carrying the answer to the first tools/call "
                        + "closes before it (stream-closed's fault): the response stream breaks",
                List.of(Rules.disconnect("stream-broken-reissue", "client").onMethod("tools/call").onResponses()
                        .times(1)),
                "re-issues the request as a new request with a new id (there is no resumption in this revision)",
                "2026-07-28 changelog, major change 9 (SEP-2575: \"A broken response stream loses the in-flight "
                        + "request; clients MUST re-issue it as a new request with a new request ID\"); "
                        + "basic/transports/streamable-http (\"Resumable SSE streams via Last-Event-ID are not "
                        + "supported\")", Level.MUST, HTTP, STATELESS,
                "pass when the same request (method and params) came again after the cut under a new id; fail when "
                        + "it never came again, or came under the lost request's id",
                StatelessGraders.reissuesAfterBrokenStream(), null));
        s.add(new Scenario("close-as-cancel", "the answer to the first tools/call is held "
                        + CANCEL_HOLD.toSeconds() + " s, longer than a client's own timeout",
                List.of(Rules.latency("close-as-cancel", CANCEL_HOLD).onMethod("tools/call").onResponses()
                        .times(1)),
                "gives up in its own time and cancels by closing the request's stream (no notifications/cancelled "
                        + "is expected over HTTP)",
                "basic/transports/streamable-http#cancellation (2026-07-28: closing the SSE response stream is the "
                        + "cancellation); basic/patterns/cancellation (a client SHOULD cancel a request it gave up on; "
                        + "\"Streamable HTTP: Closing the SSE response stream is the cancellation signal\")",
                Level.SHOULD, HTTP, STATELESS,
                "pass when the client closed the request's stream before the answer (the journal notes the close) "
                        + "and went on, or stopped; fail when it gave up and went on (another request, or "
                        + "notifications/cancelled) with the stream left open, so that the answer reached it or the "
                        + "stream closed only when the client ended; not exercised when it waited the "
                        + CANCEL_HOLD.toSeconds() + " s out",
                StatelessGraders.cancelsByClosing(CANCEL_HOLD), null));
        // listen-cut (#37): in a class of its own, with its grader.
        s.add(SubscriptionScenarios.listenCut());
        s.add(new Scenario("input-required-loop", "every answer to tools/call of echo is one more input_required "
                        + "round (requestState only): the rounds never end",
                List.of(Rules.inputRequired("input-required-loop").onMethod("tools/call").onTool("echo")
                        .onResponses()),
                "retries each round under a new id, echoing requestState exactly, and stops after a bound of its own",
                "basic/patterns/mrtr#client-requirements-basic-workflow (MUST: a new id, requestState echoed exactly; "
                        + "the bound is the drill's: a server MAY ask on every attempt)", Level.SHOULD, BOTH, STATELESS,
                "fail when a retry reuses an id or does not echo the round's requestState, when the client answers "
                        + "more than " + StatelessGraders.MAX_INPUT_ROUNDS + " rounds, or is stopped at the timeout",
                StatelessGraders.stopsInputRounds(), null));
        s.add(new Scenario("header-mismatch", "the first tools/call is refused 400 with -32020 (HeaderMismatch: "
                        + "Mcp-Name does not match the body)",
                List.of(Rules.headerMismatch("header-mismatch", "Mcp-Name").onMethod("tools/call").onRequests()
                        .times(1)),
                "does not resend it blindly: reports it, or lists the tools again and then retries under a new id",
                "basic/transports/streamable-http#client-behavior (SHOULD call tools/list, then retry; said of "
                        + "Mcp-Param-* mismatches) and #server-validation (400, -32020)", Level.SHOULD, HTTP, STATELESS,
                "fail when the refused call is sent again without a tools/list before it, or under its old id, or "
                        + "the client hangs", StatelessGraders.handlesHeaderMismatch(), null));
        s.add(new Scenario("version-negotiation", "the client's first request is answered -32022 (unsupported "
                        + "version; supported: 2025-11-25)",
                List.of(Rules.error("version-negotiation", -32022, "Unsupported protocol version")
                        .param("data", unsupportedVersion())
                        .onRequests().times(1)),
                "picks a version from supported and retries (here: falls back to initialize), or surfaces the error",
                "basic/versioning#protocol-version-negotiation (SHOULD)", Level.SHOULD, HTTP, STATELESS,
                "fail when a later request names the refused version again, or the client hangs",
                StatelessGraders.renegotiatesVersion(), null));
        s.add(new Scenario("discover-unsupported", "server/discover is answered 500 (not a 2026-07-28 error)",
                List.of(Rules.httpStatus("discover-unsupported", 500).onMethod("server/discover").onRequests()
                        .times(1)),
                "falls back to initialize, or surfaces the error and stops",
                "basic/transports/streamable-http#backward-compatibility (SHOULD: fall back when the body is not a "
                        + "recognized modern error); basic/versioning", Level.SHOULD, HTTP, STATELESS,
                "fail when the client goes on with 2026-07-28 requests, or hangs; a client that never calls "
                        + "server/discover (it MAY not) is not exercised", StatelessGraders.fallsBackFromDiscover(),
                null));
        return Collections.unmodifiableList(s);
    }

    /** The {@code data} of version-negotiation's -32022, in the spec's order: {@code supported}, {@code requested}. */
    private static Map<String, Object> unsupportedVersion() {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("supported", List.of("2025-11-25"));
        data.put("requested", "2026-07-28");
        return data;
    }

    private static Scenario built(String name, String fault, List<RuleDraft> rules, String resilient, String source,
                                  Level level, String grading, Grader grader) {
        return new Scenario(name, fault, rules, resilient, source, level, BOTH, ALL_ERAS, grading, grader, null);
    }

    private static Scenario notBuilt(String name, String fault, String resilient, String source, Level level,
                                     Set<TransportKind> transports, Set<Era> eras, String why) {
        return new Scenario(name, fault, List.of(), resilient, source, level, transports, eras,
                "not built yet", null, why);
    }
}
