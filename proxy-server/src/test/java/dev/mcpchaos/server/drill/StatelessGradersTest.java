package dev.mcpchaos.server.drill;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The 2026-07-28 era's graders on journals written by hand, with the message text the drill keeps in that era. */
class StatelessGradersTest {

    private static final Direction C2S = Direction.CLIENT_TO_SERVER;
    private static final Direction S2C = Direction.SERVER_TO_CLIENT;

    private final List<JournalEntry> entries = new ArrayList<>();

    /** A client request speaking {@code version} (2026: in _meta; initialize: in params), with {@code extra} params. */
    private JournalEntry request(Object id, String method, String tool, String version, String extra, String fault,
                                 String detail) {
        String meta = method.equals("initialize") ? "\"protocolVersion\":\"" + version + "\""
                : "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + version + "\"}";
        String params = "{" + (tool == null ? "" : "\"name\":\"" + tool + "\",") + meta + extra + "}";
        String text = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}";
        return add(C2S, MessageKind.REQUEST, id, method, tool, fault, detail, fault == null, text, "p-" + tool);
    }

    private JournalEntry answer(Object id, String method, String tool, String fault, String detail) {
        return add(S2C, MessageKind.RESPONSE, id, method, tool, fault, detail, true, null, null);
    }

    private JournalEntry add(Direction direction, MessageKind kind, Object id, String method, String tool, String fault,
                             String detail, boolean delivered, String text, String fingerprint) {
        List<JournalEntry.FaultAction> faults = fault == null ? List.of()
                : List.of(new JournalEntry.FaultAction("r", fault, detail));
        long n = entries.size() + 1;
        JournalEntry e = new JournalEntry(n, Duration.ofMillis(n * 10), Instant.EPOCH.plusMillis(n * 10), "http-" + n,
                "http", direction, kind, id, method, tool, null, null, Map.of(), faults, delivered,
                kind == MessageKind.REQUEST ? fingerprint : null, null, text);
        entries.add(e);
        return e;
    }

    private Grader.Finding grade(Grader grader, Integer exit) {
        return grader.grade(new Grader.Run(new JournalSnapshot(entries, 1000, 0, entries.size() + 1), List.of("r"),
                exit));
    }

    @Test
    void aFaultThatNeverFiredIsNotExercised() {
        request(1L, "tools/list", null, "2026-07-28", "", null, null);
        answer(1L, "tools/list", null, null, null);
        for (Grader g : List.of(StatelessGraders.stopsInputRounds(), StatelessGraders.handlesHeaderMismatch(),
                StatelessGraders.renegotiatesVersion(), StatelessGraders.fallsBackFromDiscover())) {
            assertThat(grade(g, 0).outcome()).isEqualTo(Outcome.NOT_EXERCISED);
        }
    }

    @Test
    void inputRoundsPassWhenEachRetryIsNewAndEchoesTheStateAndTheClientStops() {
        request(1L, "tools/call", "echo", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "echo", "input_required", "result replaced by an input_required round (requestState s1)");
        request(2L, "tools/call", "echo", "2026-07-28", ",\"requestState\":\"s1\"", null, null);
        answer(2L, "tools/call", "echo", "input_required", "result replaced by an input_required round (requestState s2)");
        Grader.Finding pass = grade(StatelessGraders.stopsInputRounds(), 0);
        assertThat(pass.outcome()).as(pass.reason()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("after 2 input_required round(s)").contains("echoing its requestState");
        assertThat(grade(StatelessGraders.stopsInputRounds(), null).outcome()).as("stopped at the timeout")
                .isEqualTo(Outcome.FAIL);
    }

    @Test
    void inputRoundsFailOnATamperedStateAReusedIdOrNoBound() {
        request(1L, "tools/call", "echo", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "echo", "input_required", "result replaced by an input_required round (requestState s1)");
        request(2L, "tools/call", "echo", "2026-07-28", ",\"requestState\":\"other\"", null, null);
        assertThat(grade(StatelessGraders.stopsInputRounds(), 0).reason()).contains("carried requestState 'other'")
                .contains("MUST echo");

        entries.clear();
        request(1L, "tools/call", "echo", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "echo", "input_required", "result replaced by an input_required round (requestState s1)");
        request(1L, "tools/call", "echo", "2026-07-28", ",\"requestState\":\"s1\"", null, null);
        Grader.Finding reused = grade(StatelessGraders.stopsInputRounds(), 0);
        assertThat(reused.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(reused.reason()).contains("reused the id 1");

        entries.clear();
        for (long id = 1; id <= StatelessGraders.MAX_INPUT_ROUNDS + 1; id++) {
            request(id, "tools/call", "echo", "2026-07-28", id == 1 ? "" : ",\"requestState\":\"s" + (id - 1) + "\"",
                    null, null);
            answer(id, "tools/call", "echo", "input_required",
                    "result replaced by an input_required round (requestState s" + id + ")");
        }
        Grader.Finding endless = grade(StatelessGraders.stopsInputRounds(), 0);
        assertThat(endless.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(endless.reason()).contains("answered 21 input_required rounds");
    }

    @Test
    void aHeaderMismatchIsRetriedOnlyAfterListingTheTools() {
        request(1L, "tools/call", "slow", "2026-07-28", "", "header_mismatch", "answered HTTP 400 with -32020");
        assertThat(grade(StatelessGraders.handlesHeaderMismatch(), 0).outcome()).as("not resent")
                .isEqualTo(Outcome.PASS);
        request(2L, "tools/call", "slow", "2026-07-28", "", null, null);
        Grader.Finding blind = grade(StatelessGraders.handlesHeaderMismatch(), 0);
        assertThat(blind.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(blind.reason()).contains("without calling tools/list first");

        entries.clear();
        request(1L, "tools/call", "slow", "2026-07-28", "", "header_mismatch", "answered HTTP 400 with -32020");
        request(2L, "tools/list", null, "2026-07-28", "", null, null);
        request(3L, "tools/call", "slow", "2026-07-28", "", null, null);
        assertThat(grade(StatelessGraders.handlesHeaderMismatch(), 0).outcome()).isEqualTo(Outcome.PASS);
    }

    @Test
    void aRefusedVersionIsNotNamedAgain() {
        request(1L, "server/discover", null, "2026-07-28", "", "error", "answered with error -32022; not forwarded");
        request(2L, "initialize", null, "2025-11-25", "", null, null);
        Grader.Finding pass = grade(StatelessGraders.renegotiatesVersion(), 0);
        assertThat(pass.outcome()).as(pass.reason()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("initialize, version 2025-11-25");
        request(3L, "server/discover", null, "2026-07-28", "", null, null);
        Grader.Finding fail = grade(StatelessGraders.renegotiatesVersion(), 0);
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("naming 2026-07-28 again");
    }

    @Test
    void aFailedDiscoverIsFollowedByInitializeOrAStopNotByMore2026Requests() {
        request(1L, "server/discover", null, "2026-07-28", "", "http_status", "answered HTTP 500");
        assertThat(grade(StatelessGraders.fallsBackFromDiscover(), 1).outcome()).as("stopped").isEqualTo(Outcome.PASS);
        assertThat(grade(StatelessGraders.fallsBackFromDiscover(), null).outcome()).as("hung").isEqualTo(Outcome.FAIL);
        request(2L, "tools/list", null, "2026-07-28", "", null, null);
        assertThat(grade(StatelessGraders.fallsBackFromDiscover(), 0).reason())
                .contains("went on with 2026-07-28 requests");

        entries.clear();
        request(1L, "server/discover", null, "2026-07-28", "", "http_status", "answered HTTP 500");
        request(2L, "initialize", null, "2025-11-25", "", null, null);
        assertThat(grade(StatelessGraders.fallsBackFromDiscover(), 0).reason()).contains("fell back to initialize");
    }

    /** The server's answer to {@code id} that a rule acted on and that did not reach the client. */
    private JournalEntry lostAnswer(Object id, String method, String tool, String fault) {
        return add(S2C, MessageKind.RESPONSE, id, method, tool, fault, "", false, null, null);
    }

    /** Notes that the client closed the exchange of {@code request} at {@code millis} (the entries' clock). */
    private void closed(JournalEntry request, long millis) {
        entries.set((int) request.sequence() - 1, request.withClientClosed(Duration.ofMillis(millis)));
    }

    @Test
    void aBrokenStreamIsReissuedUnderANewId() {
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        lostAnswer(1L, "tools/call", "slow", "disconnect");
        request(2L, "tools/call", "slow", "2026-07-28", "", null, null);
        Grader.Finding pass = grade(StatelessGraders.reissuesAfterBrokenStream(), 0);
        assertThat(pass.outcome()).as(pass.reason()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("re-issued it as #3 under the new id 2");
        assertThat(pass.evidence()).hasSize(3);
    }

    @Test
    void aBrokenStreamNotReissuedOrReissuedUnderTheOldIdFails() {
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        lostAnswer(1L, "tools/call", "slow", "disconnect");
        request(2L, "tools/call", "echo", "2026-07-28", "", null, null); // another call is no re-issue
        Grader.Finding never = grade(StatelessGraders.reissuesAfterBrokenStream(), 0);
        assertThat(never.outcome()).as(never.reason()).isEqualTo(Outcome.FAIL);
        assertThat(never.reason()).contains("never re-issued it");
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null); // each its own session: still caught
        Grader.Finding sameId = grade(StatelessGraders.reissuesAfterBrokenStream(), 0);
        assertThat(sameId.outcome()).as(sameId.reason()).isEqualTo(Outcome.FAIL);
        assertThat(sameId.reason()).contains("under the lost request's id 1");
        entries.clear();
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "slow", null, null);
        assertThat(grade(StatelessGraders.reissuesAfterBrokenStream(), 0).outcome()).isEqualTo(Outcome.NOT_EXERCISED);
    }

    @Test
    void closingTheStreamOfARequestGivenUpOnAndGoingOnIsCancelling() {
        JournalEntry call = request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        lostAnswer(1L, "tools/call", "slow", "latency");
        closed(call, 25);
        request(2L, "tools/call", "echo", "2026-07-28", "", null, null); // at 30 ms, after the close
        Grader.Finding pass = grade(StatelessGraders.cancelsByClosing(Duration.ofMillis(100)), 0);
        assertThat(pass.outcome()).as(pass.reason()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("closed the stream of #1 (tools/call slow) 0.015s after sending it")
                .contains("went on (#3)");
    }

    @Test
    void goingOnWhileTheStreamStaysOpenFails() {
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "slow", "latency", "held"); // delivered at 20 + 100 ms
        request(2L, "tools/call", "echo", "2026-07-28", "", null, null); // at 30 ms: it had given up
        Grader.Finding reached = grade(StatelessGraders.cancelsByClosing(Duration.ofMillis(100)), 0);
        assertThat(reached.outcome()).as(reached.reason()).isEqualTo(Outcome.FAIL);
        assertThat(reached.reason()).contains("went on (#3 tools/call) while its stream stayed open")
                .contains("still reached it");

        entries.clear();
        JournalEntry call = request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        lostAnswer(1L, "tools/call", "slow", "latency");
        request(2L, "tools/call", "echo", "2026-07-28", "", null, null);
        closed(call, 50); // only as the client ended: nothing of it after the close
        Grader.Finding atExit = grade(StatelessGraders.cancelsByClosing(Duration.ofMillis(100)), 0);
        assertThat(atExit.outcome()).as(atExit.reason()).isEqualTo(Outcome.FAIL);
        assertThat(atExit.reason()).contains("closed only when the client ended");
    }

    @Test
    void aClientThatWaitsTheHeldAnswerOutIsNotPutToTheTest() {
        request(1L, "tools/call", "slow", "2026-07-28", "", null, null);
        answer(1L, "tools/call", "slow", "latency", "held");
        Grader.Finding waited = grade(StatelessGraders.cancelsByClosing(Duration.ofMillis(100)), 0);
        assertThat(waited.outcome()).as(waited.reason()).isEqualTo(Outcome.NOT_EXERCISED);
        assertThat(waited.reason()).contains("waited the 100 ms out");
    }

    /** request-dropped in 2026: each sessionless request is a session of its own, ids are still compared. */
    @Test
    void aDroppedSessionlessReadResentUnderItsIdFailsAtMust() {
        add(C2S, MessageKind.REQUEST, 1L, "tools/list", null, "drop", "dropped", false,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                        + "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", "p-list");
        request(1L, "tools/list", null, "2026-07-28", "", null, null);
        Grader.Finding reused = grade(Graders.resendsDroppedRequest(), 0);
        assertThat(reused.outcome()).as(reused.reason()).isEqualTo(Outcome.FAIL);
        assertThat(reused.level()).isEqualTo(Level.MUST);
        assertThat(reused.reason()).contains("the id of a request still unanswered");
    }
}
