package dev.mcpchaos.server.drill;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.server.host.McpRevisions;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The graders of the 2026-07-28 era's scenarios (stateless). Like {@link Graders}, each answers
 * {@link Outcome#NOT_EXERCISED} first when the scenario's rules hit nothing. They read what the
 * sessionless revision puts in each request's body, {@code _meta}'s protocol version and
 * {@code requestState}, from the journal's message text, which the drill keeps in this era; where
 * a journal has no text (content off) those parts are not judged, and the reason says so.
 */
final class StatelessGraders {

    /**
     * How many {@code input_required} rounds a client may answer before it should stop. The spec
     * sets no bound (a server MAY ask again on every attempt); the drill takes twice the
     * TypeScript SDK's default cap (10 rounds), so that only a client with no bound of its own,
     * or a very loose one, fails.
     */
    static final int MAX_INPUT_ROUNDS = 20;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REQUEST_STATE = Pattern.compile("\\(requestState (.*)\\)");

    private StatelessGraders() {
    }

    /**
     * {@code input_required} rounds that never end: the client answers each with a retry under a
     * new id that echoes the round's {@code requestState} exactly (MUSTs of Multi Round-Trip
     * Requests, client requirements 2 and 3), and stops within {@link #MAX_INPUT_ROUNDS} rounds,
     * on its own (not stopped at the timeout).
     */
    static Grader stopsInputRounds() {
        return run -> {
            List<JournalEntry> rounds = Graders.hits(run, e -> !e.fromClient());
            if (rounds.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry first = rounds.get(0);
            List<JournalEntry> requests = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && Objects.equals(e.method(), first.method()) && Objects.equals(e.tool(), first.tool()));
            Map<Object, JournalEntry> byId = new HashMap<>();
            boolean content = true;
            for (JournalEntry request : requests) {
                JournalEntry earlier = request.id() == null ? null : byId.putIfAbsent(request.id(), request);
                if (earlier != null) {
                    return new Grader.Finding(Outcome.FAIL, "the retry #" + request.sequence() + " reused the id "
                            + request.id() + " of #" + earlier.sequence() + " (a retry is a new request: its id MUST "
                            + "differ)", Graders.lines(earlier, request));
                }
            }
            for (JournalEntry round : rounds) {
                String state = requestState(round);
                JournalEntry retry = requests.stream().filter(r -> r.sequence() > round.sequence()).findFirst()
                        .orElse(null);
                if (state == null || retry == null) {
                    continue;
                }
                JsonNode body = body(retry);
                if (body == null) {
                    content = false;
                    continue;
                }
                String echoed = body.path("params").path("requestState").textValue();
                if (!state.equals(echoed)) {
                    return new Grader.Finding(Outcome.FAIL, "the retry #" + retry.sequence() + " carried requestState "
                            + (echoed == null ? "none" : "'" + echoed + "'") + " where #" + round.sequence()
                            + " gave '" + state + "' (the client MUST echo it exactly)", Graders.lines(round, retry));
                }
            }
            String judged = content ? "each retry under a new id, echoing its requestState"
                    : "each retry under a new id (the journal kept no message text: the requestState echo is not "
                    + "judged)";
            if (run.clientExit() == null) {
                return new Grader.Finding(Outcome.FAIL, "the client was still answering input_required rounds when "
                        + "it was stopped at the timeout, after " + rounds.size() + " rounds", Graders.lines(rounds));
            }
            if (rounds.size() > MAX_INPUT_ROUNDS) {
                return new Grader.Finding(Outcome.FAIL, "the client answered " + rounds.size() + " input_required "
                        + "rounds (expected: it stops within " + MAX_INPUT_ROUNDS + "); it " + Graders.exit(run),
                        Graders.lines(rounds));
            }
            return new Grader.Finding(Outcome.PASS, "the client stopped after " + rounds.size() + " input_required "
                    + "round(s), " + judged + "; it " + Graders.exit(run), Graders.lines(rounds));
        };
    }

    /**
     * A request refused {@code 400} with {@code -32020} (HeaderMismatch): the client does not send
     * it again blindly. It reports it, or calls {@code tools/list} first and then retries (the
     * SHOULD of Streamable HTTP, "Client Behavior", for a mismatch of {@code Mcp-Param-*}
     * headers), under a new id.
     */
    static Grader handlesHeaderMismatch() {
        return run -> {
            List<JournalEntry> refused = Graders.hits(run, JournalEntry::fromClient);
            if (refused.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry r = refused.get(0);
            List<JournalEntry> resent = run.journal().filter(e -> e.fromClient() && e.sequence() > r.sequence()
                    && e.sameArgumentsAs(r));
            if (resent.isEmpty()) {
                if (run.clientExit() == null) {
                    return new Grader.Finding(Outcome.FAIL, "after the -32020 on #" + r.sequence() + " the client "
                            + "neither sent it again nor ended: it was stopped at the timeout", Graders.lines(r));
                }
                return new Grader.Finding(Outcome.PASS, "the client did not send #" + r.sequence() + " again after "
                        + "its -32020; it " + Graders.exit(run), Graders.lines(r));
            }
            JournalEntry again = resent.get(0);
            if (Objects.equals(again.id(), r.id())) {
                return new Grader.Finding(Outcome.FAIL, "the client resent #" + r.sequence() + " as #"
                        + again.sequence() + " under the same id " + again.id(), Graders.lines(r, again));
            }
            List<JournalEntry> relisted = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && "tools/list".equals(e.method()) && e.sequence() > r.sequence() && e.sequence() < again.sequence());
            if (relisted.isEmpty()) {
                return new Grader.Finding(Outcome.FAIL, "after the -32020 on #" + r.sequence() + " the client sent it "
                        + "again as #" + again.sequence() + " without calling tools/list first (it SHOULD check the "
                        + "tool's definition, then retry)", Graders.lines(r, again));
            }
            return new Grader.Finding(Outcome.PASS, "after the -32020 on #" + r.sequence() + " the client listed the "
                    + "tools (#" + relisted.get(0).sequence() + ") and then sent it again as #" + again.sequence()
                    + " under a new id", Graders.lines(r, relisted.get(0), again));
        };
    }

    /**
     * A request answered {@code -32022} (UnsupportedProtocolVersion): the client does not name the
     * refused version again. It picks one from {@code supported} and retries, or surfaces the
     * error (Versioning, "Protocol Version Negotiation", SHOULD); hanging on is a failure.
     */
    static Grader renegotiatesVersion() {
        return run -> {
            List<JournalEntry> refused = Graders.hits(run, JournalEntry::fromClient);
            if (refused.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry r = refused.get(0);
            String version = version(r);
            List<JournalEntry> later = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && e.sequence() > r.sequence());
            if (version != null) {
                for (JournalEntry e : later) {
                    if (version.equals(version(e))) {
                        return new Grader.Finding(Outcome.FAIL, "after #" + r.sequence() + " was refused -32022 "
                                + "for version " + version + ", the client sent #" + e.sequence() + " (" + e.method()
                                + ") naming " + version + " again (it SHOULD pick a version from the error's supported "
                                + "list, or surface the error)", Graders.lines(r, e));
                    }
                }
            }
            if (run.clientExit() == null) {
                return new Grader.Finding(Outcome.FAIL, "after the -32022 on #" + r.sequence() + " the client neither "
                        + "went on nor ended: it was stopped at the timeout", Graders.lines(r));
            }
            String what = version == null ? " (the journal kept no message text: the versions are not judged)" : "";
            if (later.isEmpty()) {
                return new Grader.Finding(Outcome.PASS, "after the -32022 on #" + r.sequence() + " the client sent "
                        + "nothing more: it surfaced the error; it " + Graders.exit(run) + what, Graders.lines(r));
            }
            JournalEntry next = later.get(0);
            return new Grader.Finding(Outcome.PASS, "after the -32022 on #" + r.sequence() + " the client went on with "
                    + "#" + next.sequence() + " (" + next.method() + (version(next) == null ? "" : ", version "
                    + version(next)) + "), not naming " + (version == null ? "the refused version" : version)
                    + " again" + what, Graders.lines(r, next));
        };
    }

    /**
     * {@code server/discover} failed with an answer that is not a recognized 2026-07-28 error (a
     * {@code 500}): the client falls back to {@code initialize} (a client that also speaks the
     * revisions with sessions) or surfaces the error and stops; it does not go on sending
     * 2026-07-28 requests as if the server spoke that revision (Streamable HTTP, "Backward
     * Compatibility", SHOULD), nor hang.
     */
    static Grader fallsBackFromDiscover() {
        return run -> {
            List<JournalEntry> refused = Graders.hits(run, JournalEntry::fromClient);
            if (refused.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry r = refused.get(0);
            List<JournalEntry> later = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && e.sequence() > r.sequence());
            JournalEntry initialize = later.stream().filter(e -> "initialize".equals(e.method())).findFirst()
                    .orElse(null);
            if (initialize != null) {
                return new Grader.Finding(Outcome.PASS, "server/discover (#" + r.sequence() + ") was answered "
                        + Graders.faultsOf(r) + " and the client fell back to initialize (#" + initialize.sequence()
                        + "); it " + Graders.exit(run), Graders.lines(r, initialize));
            }
            List<JournalEntry> modern = new ArrayList<>();
            for (JournalEntry e : later) {
                if (McpRevisions.isSessionless(version(e))) {
                    modern.add(e);
                }
            }
            if (!modern.isEmpty()) {
                List<JournalEntry> evidence = new ArrayList<>(List.of(r));
                evidence.addAll(modern);
                return new Grader.Finding(Outcome.FAIL, "server/discover (#" + r.sequence() + ") failed, yet the client "
                        + "went on with 2026-07-28 requests (#" + modern.get(0).sequence() + " " + modern.get(0).method()
                        + "): it SHOULD fall back to initialize or surface the error", Graders.lines(evidence));
            }
            if (run.clientExit() == null) {
                return new Grader.Finding(Outcome.FAIL, "after server/discover (#" + r.sequence() + ") failed the "
                        + "client neither fell back nor ended: it was stopped at the timeout", Graders.lines(r));
            }
            return new Grader.Finding(Outcome.PASS, "server/discover (#" + r.sequence() + ") failed and the client "
                    + "stopped without going on in 2026-07-28: it " + Graders.exit(run), Graders.lines(r));
        };
    }

    /**
     * A broken response stream: the connection carrying the answer to a request closed before it.
     * The 2026-07-28 revision has no resumption; the client MUST re-issue the request as a new
     * request with a new id (changelog, major change 9, SEP-2575). Pass when the same request (the
     * same method and params, {@code _meta} aside) came again after the cut under an id other than
     * the lost one; fail when it never came again, or came under the lost request's id (which had
     * no answer: basic#requests, MUST NOT match the id of a request still unanswered). Ids are
     * compared across the whole journal: each sessionless request is a session of its own there.
     */
    static Grader reissuesAfterBrokenStream() {
        return run -> {
            List<JournalEntry> cut = Graders.hits(run, e -> !e.fromClient());
            if (cut.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry answer = cut.get(0);
            JournalEntry lost = requestOf(run, answer);
            if (lost == null) {
                return new Grader.Finding(Outcome.NOT_EXERCISED, "the stream of #" + answer.sequence() + " broke, but "
                        + "the journal no longer holds the request it answered; the client " + Graders.exit(run),
                        Graders.lines(answer));
            }
            List<JournalEntry> again = run.journal().filter(e -> e.fromClient() && e.sequence() > answer.sequence()
                    && e.sameArgumentsAs(lost));
            if (again.isEmpty()) {
                return new Grader.Finding(Outcome.FAIL, "the stream of #" + lost.sequence() + " (" + describe(lost)
                        + ") broke before its answer (#" + answer.sequence() + ", " + Graders.faultsOf(answer) + ") and "
                        + "the client never re-issued it (it MUST, as a new request with a new id); it "
                        + Graders.exit(run), Graders.lines(lost, answer));
            }
            JournalEntry reissue = again.get(0);
            if (Objects.equals(reissue.id(), lost.id())) {
                return new Grader.Finding(Outcome.FAIL, "the client re-issued #" + lost.sequence() + " as #"
                        + reissue.sequence() + " under the lost request's id " + lost.id() + " (it MUST be a new "
                        + "request with a new id)", Graders.lines(lost, answer, reissue));
            }
            return new Grader.Finding(Outcome.PASS, "the stream of #" + lost.sequence() + " (" + describe(lost)
                    + ", id " + lost.id() + ") broke before its answer, and the client re-issued it as #"
                    + reissue.sequence() + " under the new id " + reissue.id() + ", " + Graders.seconds(answer, reissue)
                    + " after the cut", Graders.lines(lost, answer, reissue));
        };
    }

    /**
     * Closing the stream is the cancellation (Streamable HTTP 2026-07-28, "Cancellation"; the
     * Cancellation page: "Closing the SSE response stream is the cancellation signal ... No
     * {@code notifications/cancelled} message is required or expected"). The answer to a request
     * is held {@code delay}, longer than a client's own timeout. The journal notes when the client
     * closed the request's exchange before its answer ({@link JournalEntry#clientClosedAt()}).
     * Pass when it closed it and went on (a message of its after the close), or closed it by
     * ending without having gone on first. Fail when it gave up and went on (another request, or a
     * {@code notifications/cancelled}) while the stream stayed open: the answer reached it, or the
     * stream closed only when the client ended. Not exercised when it waited the delay out.
     */
    static Grader cancelsByClosing(Duration delay) {
        return run -> {
            List<JournalEntry> held = Graders.hits(run, e -> !e.fromClient());
            if (held.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry answer = held.get(0);
            JournalEntry request = requestOf(run, answer);
            if (request == null) {
                return new Grader.Finding(Outcome.NOT_EXERCISED, "the answer #" + answer.sequence() + " was held, but "
                        + "the journal no longer holds its request; the client " + Graders.exit(run),
                        Graders.lines(answer));
            }
            String which = "#" + request.sequence() + " (" + describe(request) + ")";
            List<JournalEntry> cancelled = run.journal().filter(e -> e.fromClient()
                    && "notifications/cancelled".equals(e.method()) && Objects.equals(e.requestId(), request.id()));
            String notified = cancelled.isEmpty() ? "" : "; it also sent notifications/cancelled (#"
                    + cancelled.get(0).sequence() + "), which this revision does not expect over HTTP";
            Instant closed = request.clientClosedAt();
            Instant released = answer.wallTime().plus(delay);
            Instant openUntil = closed != null ? closed : answer.delivered() ? released : null;
            // Giving up while the stream was open: another request, or a cancellation notice.
            List<JournalEntry> wentOn = run.journal().filter(e -> e.fromClient() && e.sequence() > request.sequence()
                    && (e.kind() == MessageKind.REQUEST || "notifications/cancelled".equals(e.method()))
                    && (openUntil == null || e.wallTime().isBefore(openUntil)));
            List<JournalEntry> evidence = new ArrayList<>(List.of(request, answer));
            evidence.addAll(cancelled);
            if (closed != null && !answer.delivered()) {
                List<JournalEntry> after = run.journal().filter(e -> e.fromClient() && e.wallTime().isAfter(closed));
                if (!after.isEmpty()) {
                    evidence.add(after.get(0));
                    return new Grader.Finding(Outcome.PASS, "the client closed the stream of " + which + " "
                            + Graders.seconds(request.clientClosed().minus(request.elapsed())) + " after sending it, "
                            + "before its answer (held " + delay.toMillis() + " ms; not delivered), and went on (#"
                            + after.get(0).sequence() + ")" + notified, Graders.lines(evidence));
                }
                if (wentOn.isEmpty()) {
                    return new Grader.Finding(Outcome.PASS, "the stream of " + which + " closed as the client ended, "
                            + "before its answer (held " + delay.toMillis() + " ms; not delivered): it gave up and "
                            + "stopped; it " + Graders.exit(run) + notified, Graders.lines(evidence));
                }
            }
            if (closed == null && !answer.delivered()) {
                return new Grader.Finding(Outcome.PASS, "the answer #" + answer.sequence() + " to " + which
                        + ", held " + delay.toMillis() + " ms, found its exchange closed and was not delivered (the "
                        + "journal has no time for the close)" + notified, Graders.lines(evidence));
            }
            if (wentOn.isEmpty()) {
                return new Grader.Finding(Outcome.NOT_EXERCISED, "the client waited the " + delay.toMillis() + " ms "
                        + "out: it got the answer #" + answer.sequence() + " to " + which + " without having given up "
                        + "on it first (no other request, no cancellation before it), so its own timeout is longer and "
                        + "it had nothing to cancel; the client " + Graders.exit(run), Graders.lines(evidence));
            }
            evidence.add(wentOn.get(0));
            String end = answer.delivered() ? "the answer #" + answer.sequence() + " still reached it"
                    : "the stream closed only when the client ended";
            return new Grader.Finding(Outcome.FAIL, "the client gave up on " + which + " and went on (#"
                    + wentOn.get(0).sequence() + " " + wentOn.get(0).method() + ") while its stream stayed open: " + end
                    + "; over HTTP closing the stream is the cancellation" + notified, Graders.lines(evidence));
        };
    }

    /** The client's request that {@code answer} answers: the last before it with its id and method. */
    private static JournalEntry requestOf(Grader.Run run, JournalEntry answer) {
        List<JournalEntry> requests = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                && e.sequence() < answer.sequence() && answer.id() != null && answer.id().equals(e.id())
                && Objects.equals(e.method(), answer.method()));
        return requests.isEmpty() ? null : requests.get(requests.size() - 1);
    }

    /** A request as the reasons name it: its method, and the tool of a tools/call. */
    private static String describe(JournalEntry request) {
        return request.method() + (request.tool() == null ? "" : " " + request.tool());
    }

    /** The {@code requestState} an {@code input_required} fault gave, from its detail; null if none. */
    private static String requestState(JournalEntry round) {
        for (JournalEntry.FaultAction action : round.faults()) {
            Matcher m = REQUEST_STATE.matcher(action.detail());
            if (m.find()) {
                return m.group(1);
            }
        }
        return null;
    }

    /**
     * The protocol version a request names: {@code _meta}'s
     * {@code io.modelcontextprotocol/protocolVersion} (2026-07-28), or an {@code initialize}'s
     * {@code protocolVersion}; null when the journal kept no text or it names none.
     */
    static String version(JournalEntry request) {
        JsonNode body = body(request);
        if (body == null) {
            return null;
        }
        JsonNode params = body.path("params");
        String meta = params.path("_meta").path(McpRevisions.PROTOCOL_VERSION_META).textValue();
        return meta != null ? meta : "initialize".equals(request.method())
                ? params.path("protocolVersion").textValue() : null;
    }

    /** The message's JSON, when the journal kept its text and it parses; else null. */
    private static JsonNode body(JournalEntry entry) {
        if (entry.message() == null) {
            return null;
        }
        try {
            return JSON.readTree(entry.message());
        } catch (IOException e) {
            return null;
        }
    }
}
